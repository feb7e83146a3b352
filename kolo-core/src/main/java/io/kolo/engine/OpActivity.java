package io.kolo.engine;

import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * What this rank's engine has done, over every process set: ops completed, the wall time with at least one op in
 * flight (from its submission to its end), the bytes they carried, and the last one. The threads running the cycles
 * tell it as ops go in flight and end, with atomic counters only (nothing allocated); any thread reads it (the job
 * view, once a second).
 */
public final class OpActivity {
    private final Counter ops = new Counter();
    // Time in collectives is the union of the ops' spans, not their sum: ops overlap (a step's gradients are all in
    // flight at once), and summing them would count the same second many times. Kept as the number in flight, the
    // start of the current busy span (written only by whoever takes the count from 0) and the busy time before it.
    private final AtomicLong inFlight = new AtomicLong();
    private final AtomicLong busySince = new AtomicLong();
    private final AtomicLong lastIdleSince = new AtomicLong(Long.MIN_VALUE);
    private final AtomicLong busyNanos = new AtomicLong();
    private final Counter bytes = new Counter();
    private final AtomicReference<String> lastOp = new AtomicReference<>("");
    private final AtomicLong lastEndNanos = new AtomicLong();

    /** An op named {@code name} of {@code bytes} submitted at {@code startNanos} completed at {@code endNanos}. */
    void completed(String name, long bytes, long startNanos, long endNanos) {
        ops.increment();
        this.bytes.add(bytes);
        lastOp.setRelease(name);
        lastEndNanos.setRelease(endNanos);
    }

    /**
     * An op submitted at {@code submittedNanos} is in flight (taken up by the cycle); {@link #ended} follows once it
     * completes or fails. Time before the last busy span's end is not counted twice.
     */
    void began(long submittedNanos) {
        if (inFlight.getAndIncrement() == 0) {
            busySince.setRelease(Math.max(submittedNanos, lastIdleSince.getAcquire()));
        }
    }

    /** An op {@link #began} ended (completed or failed) at {@code endNanos}. */
    void ended(long endNanos) {
        // Read before the count drops: once it is 0 another thread may start the next busy span.
        long since = busySince.getAcquire();
        if (inFlight.decrementAndGet() == 0) {
            busyNanos.addAndGet(Math.max(0, endNanos - since));
            lastIdleSince.setRelease(endNanos);
        }
    }

    /**
     * An op that ran from {@code startNanos} to {@code endNanos} without being in flight (a direct op, run by its
     * caller on the cycle): its time counts where no op in flight covered it.
     */
    void ranAlone(long startNanos, long endNanos) {
        if (inFlight.get() == 0) {
            long from = Math.max(startNanos, lastIdleSince.getAcquire());
            busyNanos.addAndGet(Math.max(0, endNanos - from));
            lastIdleSince.setRelease(endNanos);
        }
    }

    /** Ops completed since start. */
    public long ops() {
        return ops.get();
    }

    /**
     * The wall time with at least one op in flight (from an op's submission to its end), up to now: never more than
     * the time since start, however many ops overlap.
     */
    public long collectiveNanos() {
        long busy = busyNanos.get();
        long since = busySince.getAcquire();
        return inFlight.get() > 0 ? busy + Math.max(0, System.nanoTime() - since) : busy;
    }

    /** The bytes of their inputs, summed. */
    public long bytes() {
        return bytes.get();
    }

    /** The name of the last op completed, "" before the first. */
    public String lastOp() {
        return lastOp.getAcquire();
    }

    /** When it completed, in {@link System#nanoTime()} terms; 0 before the first. */
    public long lastOpEndNanos() {
        return lastEndNanos.getAcquire();
    }
}
