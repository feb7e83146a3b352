package io.kolo.engine;

import io.kolo.KoloException;
import io.kolo.KoloTimeoutException;
import io.kolo.RankFailedException;
import io.kolo.bootstrap.LazyLogger;

import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.List;

/**
 * The ops this rank has taken up and not yet ended, by name, and how an op ends, completed or failed: it leaves the
 * pending ops, its name is freed for the next op of that name (before its listener runs, which may submit that op),
 * its listener is told, and a listener that throws cannot hurt the engine. The one writer of {@link #pending()}: the
 * executors, fusion and the trace only look ops up there. Touched only by the thread running the cycle.
 */
final class Outcomes {
    private static final System.Logger LOG = LazyLogger.of(Outcomes.class);

    private final int rank;
    private final PendingOps pending = new PendingOps();
    private final InFlightNames inFlight;
    private final Counter completed = new Counter();
    /** The engine's figures over every set, for the job view. */
    private final OpActivity activity;

    Outcomes(int rank, InFlightNames inFlight, OpActivity activity) {
        this.rank = rank;
        this.inFlight = inFlight;
        this.activity = activity;
    }

    /** The pending ops, to look up by name (only this class adds or removes them). */
    PendingOps pending() {
        return pending;
    }

    /** A drained op: pending under its name until it ends. */
    void track(Op op) {
        pending.put(op.name, op);
        activity.began(op.submittedNanos);
    }

    /** Whether any op is pending. */
    boolean hasPending() {
        return !pending.isEmpty();
    }

    /** The pending ops, a copy (to explain a crash). */
    List<Op> pendingOps() {
        return pending.values();
    }

    /**
     * Fails the pending op named {@code name} (the coordinator's error for it); returns it, or null when this rank has
     * no such op. {@code before} runs first, while its listener has not been told (to withdraw and trace it).
     */
    Op failPending(String name, String error, java.util.function.Consumer<Op> before) {
        Op op = pending.remove(name);
        if (op != null) {
            activity.ended(System.nanoTime());
            before.accept(op);
            fail(op, new KoloException(error));
        }
        return op;
    }

    /** The set ends: takes every pending op out, to be failed by the caller. */
    List<Op> takeAllPending() {
        List<Op> all = pending.values();
        pending.clear();
        long now = System.nanoTime();
        for (int i = 0; i < all.size(); i++) {
            activity.ended(now);
        }
        return all;
    }

    /** Ops completed since start. */
    long completed() {
        return completed.get();
    }

    /** Completes the ops of {@code r} that this rank has (a joined rank has none). */
    void finish(Response r) {
        long now = System.nanoTime();
        for (int i = 0; i < r.names().size(); i++) {
            Op op = pending.remove(r.names().get(i));
            if (op != null) {
                activity.ended(now);
                completeRemoved(op, now);
            }
        }
    }

    /** Completes {@code op}, pending under its own name (the key is its own string: no character comparison). */
    void finish(Op op) {
        long now = System.nanoTime();
        if (pending.remove(op.name) != null) {
            activity.ended(now);
        } else {
            // An op never submitted (a direct op) has no start of its own here: it counts from nothing.
            activity.ranAlone(op.submittedNanos == 0 ? now : op.submittedNanos, now);
        }
        completeRemoved(op, now);
    }

    /** Ends an op that was just taken out of the pending ops, its collective run. */
    private void completeRemoved(Op op, long now) {
        release(op);
        completed.increment();
        activity.completed(op.name, op.input == null ? 0 : op.input.byteSize(), op.submittedNanos, now);
        notifyCompleted(op);
    }

    /**
     * Counts an op that completed without an op object (see {@link Engine#allreduceNow}): {@code name}, of
     * {@code bytes}, whose caller took the cycle at {@code startNanos}.
     */
    void countCompleted(String name, long bytes, long startNanos) {
        completed.increment();
        long now = System.nanoTime();
        activity.ranAlone(startNanos, now);
        activity.completed(name, bytes, startNanos, now);
    }

    /** Completes an op that was never pending under its name (a join). */
    void complete(Op op) {
        release(op);
        notifyCompleted(op);
    }

    /**
     * Gives {@code op} memory of {@code shape} holding {@code bytes} of {@code from} at {@code offset}. The collective
     * already ran on every rank, so a failure here (the result does not fit a Java array, or memory ran out) is this
     * op's alone: it fails the op on this rank, naming why, and the engine and the other ranks go on.
     *
     * @return whether the op got its result
     */
    boolean deliver(Op op, long[] shape, MemorySegment from, long offset, long bytes) {
        try {
            MemorySegment out = op.outputs.allocate(shape);
            MemorySegment.copy(from, offset, out, 0, bytes);
            op.setResult(shape, out);
            return true;
        } catch (RuntimeException | OutOfMemoryError e) {
            failResult(op, shape, e.toString());
            return false;
        }
    }

    /**
     * Fails an op whose collective ran but whose result this rank cannot take (no memory for it, or the output memory
     * the caller gave does not fit it, saying why in {@code problem}): the failure is this op's alone.
     */
    void failResult(Op op, long[] shape, String problem) {
        if (pending.remove(op.name) != null) {
            activity.ended(System.nanoTime());
        }
        fail(op, new KoloException(op.kind.label() + " '" + op.name + "' ran, but rank " + rank
                + " could not hold its result of shape " + Arrays.toString(shape) + ": " + problem));
    }

    void fail(Op op, RuntimeException error) {
        release(op);
        try {
            op.listener.failed(op, error);
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "failure callback of '" + op.name + "' threw", e);
        }
    }

    /** Fails {@code op} with a copy of the job's failure that names the op. */
    void failWith(Op op, RuntimeException error) {
        fail(op, copy(error, op.kind.label() + " '" + op.name + "' failed"));
    }

    /** Frees the op's name for the next op of that name. */
    void release(Op op) {
        inFlight.release(op.slot, !op.generatedName);
    }

    private void notifyCompleted(Op op) {
        try {
            op.listener.completed(op);
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "completion callback of '" + op.name + "' threw", e);
        }
    }

    /** A fresh exception per op (so each has its own stack), keeping the type and failed rank. */
    static RuntimeException copy(RuntimeException e, String context) {
        String message = context + ": " + e.getMessage();
        if (e instanceof RankFailedException rf) {
            return new RankFailedException(rf.failedRank(), message, e);
        }
        if (e instanceof KoloTimeoutException) {
            KoloTimeoutException t = new KoloTimeoutException(message);
            t.initCause(e);
            return t;
        }
        return new KoloException(message, e);
    }
}
