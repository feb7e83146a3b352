package io.kolo.engine;

import io.kolo.ReduceOp;
import io.kolo.collective.CollectiveOps;
import io.kolo.collective.Kernels;
import io.kolo.collective.Reduction;

import java.lang.foreign.MemorySegment;

/** What a response's reduce op, prescale and postscale mean for the data, shared by every reducing executor. */
final class Reductions {
    private Reductions() {
    }

    /** The element-wise reduction of an op: AVERAGE sums, and {@link #finish} divides. */
    static Reduction of(ReduceOp op) {
        return switch (op) {
            case SUM, AVERAGE -> Reduction.SUM;
            case MIN -> Reduction.MIN;
            case MAX -> Reduction.MAX;
            case PRODUCT -> Reduction.PRODUCT;
            case ADASUM -> throw new IllegalStateException("Adasum is not element-wise; the engine runs it on its own");
        };
    }

    /** The prescale factor, before the reduction. */
    static void prescale(MemorySegment buf, long offset, long count, Response r) {
        if (r.prescale() != 1.0) {
            Kernels.scale(buf, offset, count, r.type(), r.prescale());
        }
    }

    /** Prescale, reduction across the ranks, and AVERAGE/postscale, on {@code count} elements of {@code buf}. */
    static void allreduce(CollectiveOps ops, MemorySegment buf, long count, Response r) {
        prescale(buf, 0, count, r);
        if (r.op() == ReduceOp.AVERAGE && r.type().isInteger()) {
            ops.allreduce(buf, count, r.type(), of(r.op()));
            finish(buf, 0, count, r, ops.size());
            return;
        }
        // AVERAGE's division and the postscale folded into the collective: the ring scales each rank's own share
        // before sending it on, instead of one more pass over the whole buffer afterwards.
        ops.allreduceScaled(buf, count, r.type(), of(r.op()), postFactor(r, ops.size()));
    }

    /** The factor {@link #finish} multiplies a floating-point result by, or any result when the op is not AVERAGE. */
    private static double postFactor(Response r, int size) {
        double post = r.postscale();
        if (r.op() == ReduceOp.AVERAGE) {
            post /= size;
        }
        return post;
    }

    /** AVERAGE's division (exact on integer types) and the postscale factor, after the reduction. */
    static void finish(MemorySegment buf, long offset, long count, Response r, int size) {
        double post = r.postscale();
        if (r.op() == ReduceOp.AVERAGE) {
            if (r.type().isInteger()) {
                Kernels.divide(buf, offset, count, r.type(), size);
            } else {
                post /= size;
            }
        }
        if (post != 1.0) {
            Kernels.scale(buf, offset, count, r.type(), post);
        }
    }
}
