package io.kolo.engine;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/**
 * What the engine's thread does between cycles, as Agrona's {@code IdleStrategy}: it returns early when work arrives
 * (a submission unparks the thread).
 */
interface IdleStrategy {
    /**
     * Waits out the rest of a cycle of {@code periodNanos} that began at {@code cycleStart}.
     *
     * @param ranOps       whether ops completed since the last idle period
     * @param workArrived  true once something was submitted
     */
    void idle(long cycleStart, long periodNanos, long now, boolean ranOps, BooleanSupplier workArrived);

    /**
     * After a cycle that ran ops, polls for this long (yielding, so that on a machine with fewer cores than busy
     * threads the caller it just woke gets the CPU), then parks: a training loop usually submits its next op within
     * microseconds, and a parked thread takes tens of microseconds to wake.
     */
    IdleStrategy POLL_THEN_PARK = pollThenPark(TimeUnit.MICROSECONDS.toNanos(50));

    static IdleStrategy pollThenPark(long pollNanos) {
        return (cycleStart, period, now, ranOps, workArrived) -> {
            if (ranOps) {
                long pollEnd = now + Math.min(pollNanos, period - (now - cycleStart));
                while (!workArrived.getAsBoolean() && System.nanoTime() - pollEnd < 0) {
                    Thread.yield();
                }
            }
            long rest = period - (System.nanoTime() - cycleStart);
            if (!workArrived.getAsBoolean() && rest > 0) {
                LockSupport.parkNanos(rest);
            }
        };
    }
}
