package io.kolo.engine;

import java.util.concurrent.atomic.AtomicReference;

/**
 * Ops submitted by callers, on their way to the thread that runs the next cycle. Any thread adds; the cycle takes
 * everything at once. The ops themselves are the links ({@link Op#nextSubmitted}), so adding allocates nothing: a
 * {@code ConcurrentLinkedQueue} allocated a node per op and cost ~6 % of a 1 KiB allreduce in CAS traffic.
 */
final class SubmissionQueue {
    /** The newest op; each links to the one submitted before it. */
    private final AtomicReference<Op> newest = new AtomicReference<>();

    void add(Op op) {
        Op top;
        do {
            top = newest.get();
            op.nextSubmitted = top;
        } while (!newest.compareAndSet(top, op));
    }

    boolean isEmpty() {
        return newest.get() == null;
    }

    /** Unlinks {@code op}, taken by {@link #takeAll}, and returns the op submitted after it (null after the last). */
    static Op detach(Op op) {
        Op next = op.nextSubmitted;
        op.nextSubmitted = null;
        return next;
    }

    /**
     * Takes every op added so far and returns the oldest; the rest follow in submission order through
     * {@link Op#nextSubmitted}. Null when empty.
     */
    Op takeAll() {
        // A plain read first: most cycles find nothing, and the swap is a locked instruction.
        if (newest.get() == null) {
            return null;
        }
        Op op = newest.getAndSet(null);
        Op oldest = null;
        while (op != null) {
            Op next = op.nextSubmitted;
            op.nextSubmitted = oldest;
            oldest = op;
            op = next;
        }
        return oldest;
    }
}
