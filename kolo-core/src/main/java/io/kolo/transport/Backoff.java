package io.kolo.transport;

/**
 * How a transport waits for its peer before it sleeps in the kernel, shared by shared memory, TCP and the send worker:
 * spin (cheapest when the peer answers within microseconds), then yield (lets a thread on the same CPU run: a host
 * may have fewer cores than busy threads), then tell the caller to sleep its own way (futex, selector, park). One per
 * waiting thread, reused for every wait: no allocation.
 */
final class Backoff {
    private final int spins;
    private final int yields;
    private final long spinNanos;
    private int idle;
    private long idleSince;

    /**
     * @param spins     busy-wait rounds before yielding
     * @param yields    yielding rounds before sleeping
     * @param spinNanos keep spinning at least this long after the wait began (0: rounds only)
     */
    Backoff(int spins, int yields, long spinNanos) {
        this.spins = spins;
        this.yields = yields;
        this.spinNanos = spinNanos;
    }

    /** Something moved: the next wait starts from spinning again. */
    void reset() {
        idle = 0;
    }

    /** One round of waiting: spins or yields and returns true, or returns false when the caller should sleep. */
    boolean idle() {
        if (++idle == 1) {
            idleSince = System.nanoTime();
        }
        if (idle <= spins || (spinNanos > 0 && System.nanoTime() - idleSince < spinNanos)) {
            Thread.onSpinWait();
            return true;
        }
        if (idle <= spins + yields) {
            Thread.yield();
            return true;
        }
        return false;
    }

    /** When the current wait began ({@link System#nanoTime()}). */
    long idleSince() {
        return idleSince;
    }
}
