package io.kolo.transport;

import io.kolo.KoloException;

/** The connection to {@link #peer()} broke: the peer exited, crashed, or aborted. */
public class PeerFailedException extends KoloException {
    private static final long serialVersionUID = 1L;
    private final int peer;

    public PeerFailedException(int peer, String message, Throwable cause) {
        super(message, cause);
        this.peer = peer;
    }

    /** The rank at the other end of the broken connection. */
    public int peer() {
        return peer;
    }
}
