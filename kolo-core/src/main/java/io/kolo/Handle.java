package io.kolo;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * The pending result of an asynchronous collective.
 *
 * <pre>{@code
 * Handle<Tensor> h = comm.allreduceAsync("grad.w", Tensor.of(w), ReduceOp.AVERAGE);
 * ... // compute something else meanwhile
 * h.await();                      // waits at most KOLO_TIMEOUT_SECONDS
 * }</pre>
 *
 * @param <T> the result type
 */
public final class Handle<T> {
    private static final VarHandle LATCH;

    static {
        try {
            LATCH = MethodHandles.lookup().findVarHandle(Handle.class, "latch", CountDownLatch.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    // Set by the API before the handle reaches its caller, so plain fields: whoever the caller hands it to sees them.
    private String name;
    private final Duration defaultTimeout;
    private Driver driver;
    private java.util.function.Function<String, String> explainer;
    /** Written before {@link #done} is set, read after it is seen set. */
    private T value;
    private RuntimeException error;
    private volatile boolean done;
    /**
     * Made only when a thread must sleep until the op ends: a caller that drives the engine's cycles itself (the
     * usual case) sees {@link #done} without one. A small op's handle is on the hot path of every collective.
     */
    private volatile CountDownLatch latch;
    private final BooleanSupplier isDone = this::poll;

    /** Runs the engine's work on the waiting thread until {@code done} or the deadline ({@link System#nanoTime}). */
    @FunctionalInterface
    interface Driver {
        void drive(BooleanSupplier done, long nowNanos, long deadlineNanos);
    }

    Handle(String name, Duration defaultTimeout) {
        this.name = name;
        this.defaultTimeout = defaultTimeout;
    }

    /** The op's name (generated when none was given). */
    public String name() {
        return name;
    }

    /** True once the op has completed or failed; never blocks. */
    public boolean poll() {
        return done;
    }

    /** Waits up to {@code KOLO_TIMEOUT_SECONDS} and returns the result. */
    public T await() {
        return await(defaultTimeout);
    }

    /**
     * Waits up to {@code timeout} and returns the result; {@link Duration#ZERO} takes it only if the op is done.
     *
     * @throws IllegalArgumentException if {@code timeout} is negative (a bug in the caller's arithmetic, not a wait
     *                                  that ran out)
     * @throws KoloTimeoutException     if it is not done in time
     * @throws KoloException            (or {@link RankFailedException}) if the op failed, with the cause on every rank
     */
    public T await(Duration timeout) {
        if (timeout.isNegative()) {
            throw new IllegalArgumentException("await timeout " + timeout + " is negative: pass Duration.ZERO to take"
                    + " the result only if it is done, or a positive timeout");
        }
        long now = System.nanoTime();
        // Saturating: a timeout past what a long of nanoseconds holds (ChronoUnit.FOREVER) waits as long as it can.
        long deadline = now + TimeUnit.NANOSECONDS.convert(timeout);
        Driver d = driver;
        if (d != null && !done) {
            // Do the engine's work here rather than sleep until its thread has done it and wakes us.
            d.drive(isDone, now, deadline);
        }
        if (!done) {
            sleepUntilDone(timeout, deadline);
        }
        RuntimeException e = error;
        if (e != null) {
            throw e;
        }
        return value;
    }

    private void sleepUntilDone(Duration timeout, long deadline) {
        CountDownLatch l = latch;
        if (l == null) {
            LATCH.compareAndSet(this, null, new CountDownLatch(1));
            l = latch;
        }
        try {
            // Re-checked after the latch is in place: an end that came before it did not count it down.
            if (!done && !l.await(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS) && !done) {
                String waiting = explainer == null ? null : explainer.apply(name);
                // KOLO_TIMEOUT_SECONDS is only the default: a wait given its own timeout is lengthened there.
                throw new KoloTimeoutException("timed out after " + io.kolo.bootstrap.Durations.describe(timeout) + " waiting for '" + name
                        + "': " + (waiting != null ? waiting
                        : "some rank has not submitted it yet (rank 0 logs which after KOLO_STALL_CHECK_TIME_SECONDS)")
                        + (timeout == defaultTimeout ? "; raise KOLO_TIMEOUT_SECONDS if ranks legitimately wait this long"
                        : "; pass await() a longer timeout if ranks legitimately wait this long"));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new KoloException("interrupted while waiting for '" + name + "'", e);
        }
    }

    /** Same as {@link #await()}. */
    public T result() {
        return await();
    }

    /** Lets {@link #await} run the engine's cycles itself while it waits. */
    void drivenBy(Driver d) {
        this.driver = d;
    }

    /** Lets a timed-out {@link #await} say what the op still waits for (which ranks never submitted it). */
    void explainedBy(java.util.function.Function<String, String> waitingFor) {
        this.explainer = waitingFor;
    }

    void named(String generated) {
        this.name = generated;
    }

    void complete(T result) {
        value = result;
        end();
    }

    void fail(RuntimeException e) {
        error = e;
        end();
    }

    /**
     * The volatile write of {@link #done} comes before the read of {@link #latch}, as a sleeper's latch comes before
     * its read of {@code done}: at least one of the two sees the other, so no sleeper misses the end.
     */
    private void end() {
        done = true;
        CountDownLatch l = latch;
        if (l != null) {
            l.countDown();
        }
    }
}
