package io.kolo;

import io.kolo.engine.Op;
import io.kolo.engine.OpKind;

import java.lang.foreign.MemorySegment;
import java.util.Objects;

/**
 * Turns a user's allreduce into the engine's op: checks the factors and, when the tensor travels compressed, reduces
 * a pooled 16-bit copy and widens it back into the tensor once the op completes.
 */
final class AllreduceOps {
    private final int size;

    AllreduceOps(int size) {
        this.size = size;
    }

    private final CompressionBuffers compressionBuffers = new CompressionBuffers();

    /** An allreduce's engine op and what to do to the caller's tensor once it completes. */
    record Allreduce(Op op, Runnable widen) {
        Tensor finish(Tensor tensor) {
            if (widen != null) {
                widen.run();
            }
            return tensor;
        }
    }

    /**
     * The engine op for an allreduce. A compressed one reduces a 16-bit copy: AVERAGE and prescale are applied
     * while narrowing (so sums grow no larger than the inputs), postscale while widening into the tensor when the
     * op completes. The engine's negotiation then sees the 16-bit type, so ranks that disagree on compression get
     * a type-mismatch error naming both types.
     */
    Allreduce of(String name, Tensor tensor, ReduceOp op, double prescale, double postscale,
                 Compression compression) {
        Objects.requireNonNull(op, "op");
        Objects.requireNonNull(compression, "compression");
        checkScale(prescale, "prescale");
        checkScale(postscale, "postscale");
        DataType type = tensor.dataType();
        if (op == ReduceOp.ADASUM && !type.isFloatingPoint()) {
            throw new IllegalArgumentException("ReduceOp.ADASUM combines floating-point tensors (FLOAT16, BFLOAT16,"
                    + " FLOAT32, FLOAT64), not " + type + "; use SUM or AVERAGE for integers");
        }
        // Adasum's dot products need the full values: it never travels compressed.
        DataType wire = op == ReduceOp.ADASUM ? null : compression.wireType(type);
        if (wire == null) {
            return new Allreduce(Op.of(OpKind.ALLREDUCE, name, type, tensor.shapeShared(), tensor.segment())
                    .reduce(op, prescale, postscale), null);
        }
        long n = tensor.elements();
        short[] pooled = n <= Integer.MAX_VALUE - 8 ? compressionBuffers.take((int) n) : null;
        MemorySegment packed = pooled != null ? MemorySegment.ofArray(pooled)
                : java.lang.foreign.Arena.ofAuto().allocate(n * 2, 64);
        double pre = op == ReduceOp.AVERAGE ? prescale / size : prescale;
        Compressor.compress(tensor.segment(), type, n, pre, packed, wire);
        ReduceOp wireOp = op == ReduceOp.AVERAGE ? ReduceOp.SUM : op;
        return new Allreduce(Op.of(OpKind.ALLREDUCE, name, wire, tensor.shapeShared(), packed).reduce(wireOp, 1.0, 1.0),
                () -> {
                    Compressor.decompress(packed, wire, n, postscale, tensor.segment(), type);
                    if (pooled != null) {
                        compressionBuffers.give(pooled);
                    }
                });
    }

    private static void checkScale(double factor, String what) {
        if (!Double.isFinite(factor)) {
            throw new IllegalArgumentException(what + " factor must be finite, got " + factor);
        }
    }
}
