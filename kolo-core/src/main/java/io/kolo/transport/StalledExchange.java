package io.kolo.transport;

/**
 * A transport's exchange that sleeps for lack of progress, as {@link Transport#stalledOn()} tells another thread:
 * written by the exchanging thread only once it sleeps (never on the fast path, and without allocating), the peer
 * last, so that a reader that sees the peer sees the rest of that wait.
 */
final class StalledExchange {
    private volatile int peer = -1;
    private volatile boolean receiving;
    private volatile long bytes;
    private volatile long moved;
    private volatile long since;
    /** Whether the exchange in progress showed a wait (a plain field of the exchanging thread). */
    private boolean shown;

    /** The exchange has waited on {@code peer} since {@code sinceNanos} ({@link System#nanoTime}). */
    void show(int peer, boolean receiving, long bytes, long moved, long sinceNanos) {
        this.receiving = receiving;
        this.bytes = bytes;
        this.moved = moved;
        this.since = sinceNanos;
        this.peer = peer;
        shown = true;
    }

    /** The exchange is over (or moves again). */
    void clear() {
        if (shown) {
            shown = false;
            peer = -1;
        }
    }

    /** What {@code rank}'s exchange waits on now; null when it does not wait. */
    PeerWait read(int rank) {
        int p = peer;
        return p < 0 ? null : new PeerWait(rank, p, receiving, bytes, moved, System.nanoTime() - since);
    }
}
