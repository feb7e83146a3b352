package io.kolo.djl;

import io.kolo.Compression;
import io.kolo.ReduceOp;

/**
 * How a {@link DistributedTrainer} combines gradients. Immutable; {@code with...} methods return copies.
 *
 * @param op                       {@link ReduceOp#AVERAGE} (default), {@link ReduceOp#SUM}, or {@link ReduceOp#ADASUM}:
 *                                 as Horovod's Adasum optimizer, each rank takes its optimizer step on its own
 *                                 gradients, and the ranks' weight deltas combine by Adasum (uncompressed)
 * @param backwardPassesPerStep    backward passes accumulated locally before one allreduce and optimizer step;
 *                                 the accumulated gradient is divided by this count, so k passes of batch b
 *                                 update the model as one pass of batch k*b would
 * @param gradientPredivideFactor  with {@code AVERAGE}: gradients are divided by this factor before the sum and
 *                                 by {@code size / factor} after it (avoids overflow with 16-bit compression)
 * @param compression              how float gradients travel and are reduced: {@link Compression#FP16} or
 *                                 {@link Compression#BF16} as 16-bit floats (see {@link Compression}), or
 *                                 {@link Compression#NONE} (default) as {@code KOLO_COMPRESSION} says (full
 *                                 precision unless it is set)
 * @param root                     rank whose initial parameters everyone starts from
 */
public record DistributedOptions(ReduceOp op, int backwardPassesPerStep, double gradientPredivideFactor,
                                 Compression compression, int root) {

    public DistributedOptions {
        if (op != ReduceOp.AVERAGE && op != ReduceOp.SUM && op != ReduceOp.ADASUM) {
            throw new IllegalArgumentException("gradient op must be AVERAGE, SUM or ADASUM, not " + op);
        }
        if (backwardPassesPerStep < 1) {
            throw new IllegalArgumentException("backwardPassesPerStep must be at least 1, not " + backwardPassesPerStep);
        }
        if (!(gradientPredivideFactor > 0) || !Double.isFinite(gradientPredivideFactor)) {
            throw new IllegalArgumentException("gradientPredivideFactor must be a positive number, not "
                    + gradientPredivideFactor);
        }
        if (gradientPredivideFactor != 1.0 && op != ReduceOp.AVERAGE) {
            throw new IllegalArgumentException("gradientPredivideFactor only applies to op AVERAGE, not " + op);
        }
        if (compression == null) {
            throw new IllegalArgumentException("compression must be NONE, FP16 or BF16, not null");
        }
        if (op == ReduceOp.ADASUM && compression != Compression.NONE) {
            throw new IllegalArgumentException("Adasum combines weight deltas uncompressed; use compression NONE"
                    + " with op ADASUM, not " + compression);
        }
        if (root < 0) {
            throw new IllegalArgumentException("root rank must be >= 0, not " + root);
        }
    }

    /** Average, one backward pass per step, no predivision, no compression, parameters from rank 0. */
    public static DistributedOptions defaults() {
        return new DistributedOptions(ReduceOp.AVERAGE, 1, 1.0, Compression.NONE, 0);
    }

    public DistributedOptions withOp(ReduceOp value) {
        return new DistributedOptions(value, backwardPassesPerStep, gradientPredivideFactor, compression, root);
    }

    public DistributedOptions withBackwardPassesPerStep(int value) {
        return new DistributedOptions(op, value, gradientPredivideFactor, compression, root);
    }

    public DistributedOptions withGradientPredivideFactor(double value) {
        return new DistributedOptions(op, backwardPassesPerStep, value, compression, root);
    }

    public DistributedOptions withCompression(Compression value) {
        return new DistributedOptions(op, backwardPassesPerStep, gradientPredivideFactor, value, root);
    }

    public DistributedOptions withRoot(int value) {
        return new DistributedOptions(op, backwardPassesPerStep, gradientPredivideFactor, compression, value);
    }
}
