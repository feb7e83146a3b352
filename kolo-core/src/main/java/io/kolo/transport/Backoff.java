package io.kolo.transport;

/**
 * How a transport waits for its peer before it sleeps in the kernel, shared by shared memory, TCP and the send worker:
 * spin (cheapest when the peer answers within microseconds), then yield (lets a thread on the same CPU run: a host
 * may have fewer cores than busy threads), then tell the caller to sleep its own way (futex, selector, park). One per
 * waiting thread, reused for every wait: no allocation.
 */
final class Backoff {
    /** See {@link #idle}. */
    private static final int CLOCK_ROUND = 32;
    private final int spins;
    private final int yields;
    private final long spinNanos;
    /** The round that reads the clock: within the spins, so every test against spinNanos has it. */
    private final int clockRound;
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
        this.clockRound = Math.max(1, Math.min(spins, CLOCK_ROUND));
    }

    /** Something moved: the next wait starts from spinning again. */
    void reset() {
        idle = 0;
    }

    /** One round of waiting: spins or yields and returns true, or returns false when the caller should sleep. */
    boolean idle() {
        // The clock is read a few rounds in, not at the first: most waits for a small message end within them, and
        // clock reads are a measurable share of a small op's work ({@code kolo bench allreduce -np 2 --sizes 8B..4KiB};
        // docs/performance.md, "Measured constants"). The wait's
        // start is that much later than true.
        if (++idle == clockRound) {
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
