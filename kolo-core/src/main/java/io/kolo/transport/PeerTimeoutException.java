package io.kolo.transport;

import io.kolo.KoloTimeoutException;

/** A transport's wait on one peer ran out: nothing moved between this rank and {@link #waited()}'s peer in time. */
public final class PeerTimeoutException extends KoloTimeoutException {
    private static final long serialVersionUID = 1L;
    private final transient PeerWait waited;

    public PeerTimeoutException(String message, PeerWait waited) {
        super(message);
        this.waited = waited;
    }

    /** The peer it waited on, and for what. */
    public PeerWait waited() {
        return waited;
    }
}
