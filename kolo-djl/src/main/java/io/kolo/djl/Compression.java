package io.kolo.djl;

/**
 * How gradients travel between ranks. Compressed gradients are converted to 16 bits before the allreduce and
 * back to their own type after it, halving the bytes sent at the price of precision (Horovod's
 * {@code Compression.fp16}).
 */
public enum Compression {
    /** Gradients are sent as they are, straight from the engine's gradient memory. */
    NONE,
    /** IEEE half precision: 11 significant bits, range up to 65504. */
    FP16,
    /** bfloat16: float32's range with 8 significant bits. */
    BF16
}
