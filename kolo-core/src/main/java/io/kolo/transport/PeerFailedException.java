package io.kolo.transport;

import io.kolo.KoloException;

/** The connection to {@link #peer()} broke: the peer exited, crashed, or aborted. */
public class PeerFailedException extends KoloException {
    private static final long serialVersionUID = 1L;
    private final int peer;
    private final boolean peerAborted;

    public PeerFailedException(int peer, String message, Throwable cause) {
        this(peer, message, cause, false);
    }

    /**
     * @param peerAborted true when the peer said it stopped on purpose: it saw a failure of its own (often
     *                    another rank's), so it is a messenger rather than the cause
     */
    public PeerFailedException(int peer, String message, Throwable cause, boolean peerAborted) {
        super(message, cause);
        this.peer = peer;
        this.peerAborted = peerAborted;
    }

    /** The rank at the other end of the broken connection. */
    public int peer() {
        return peer;
    }

    /** True when the peer aborted after seeing a failure, rather than exiting, crashing or closing. */
    public boolean peerAborted() {
        return peerAborted;
    }
}
