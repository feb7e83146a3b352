package io.kolo.engine;

import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * What this rank's engine has done, over every process set: ops completed, the time they took from submission to
 * completion, the bytes they carried, and the last one. The thread running the cycle adds to it as ops complete,
 * with release stores only (nothing allocated, no fence); any thread reads it (the job view, once a second).
 */
public final class OpActivity {
    private final Counter ops = new Counter();
    private final Counter nanos = new Counter();
    private final Counter bytes = new Counter();
    private final AtomicReference<String> lastOp = new AtomicReference<>("");
    private final AtomicLong lastEndNanos = new AtomicLong();

    /** An op named {@code name} of {@code bytes} submitted at {@code startNanos} completed at {@code endNanos}. */
    void completed(String name, long bytes, long startNanos, long endNanos) {
        ops.increment();
        // An op that never went through submit (a direct op's start is its cycle's) cannot have begun before 0.
        nanos.add(Math.max(0, endNanos - startNanos));
        this.bytes.add(bytes);
        lastOp.setRelease(name);
        lastEndNanos.setRelease(endNanos);
    }

    /** Ops completed since start. */
    public long ops() {
        return ops.get();
    }

    /** Their time from submission to completion, summed. */
    public long collectiveNanos() {
        return nanos.get();
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
