package io.kolo;

import java.util.Locale;

/**
 * Lossy compression of floating-point allreduce traffic, as Horovod's {@code compression=Compression.fp16}:
 * {@code FLOAT32} and {@code FLOAT64} tensors are rounded to 16 bits before the reduction, reduced and sent in
 * 16 bits (half the bytes of float32, a quarter of float64), and widened back into the caller's tensor after.
 * Integer and 16-bit tensors are never compressed.
 *
 * <pre>{@code
 * comm.allreduce(Tensor.of(grad), ReduceOp.AVERAGE, Compression.BF16);   // one op
 * // or for every allreduce that names no compression:  KOLO_COMPRESSION=bf16
 * }</pre>
 *
 * <p>The trade-off: the reduction itself runs in 16-bit arithmetic, so partial sums are rounded to 16 bits at
 * every step (about 3 significant decimal digits for FP16, 2 for BF16). FP16 keeps more precision but
 * overflows to infinity above 65504: a SUM over many ranks of large values can overflow even when each
 * input fits. BF16 has float32's range and cannot overflow where float32 would not. {@link ReduceOp#AVERAGE}
 * (and any prescale factor) is applied while compressing, in the tensor's own precision, so averaged values
 * stay in the range of the inputs rather than growing with the number of ranks; postscale is applied after
 * widening. Every rank of an op must use the same compression; a mismatch fails the op on every rank.
 */
public enum Compression {
    /** Full precision. */
    NONE(null),
    /** IEEE-754 half precision: 11 significant bits, range +-65504. */
    FP16(DataType.FLOAT16),
    /** bfloat16: 8 significant bits, float32's range. */
    BF16(DataType.BFLOAT16);

    private final DataType wireType;

    Compression(DataType wireType) {
        this.wireType = wireType;
    }

    /** The 16-bit type a tensor of {@code type} travels as, or null when it is sent as it is. */
    DataType wireType(DataType type) {
        return wireType != null && (type == DataType.FLOAT32 || type == DataType.FLOAT64) ? wireType : null;
    }

    /** Reads {@code KOLO_COMPRESSION} ({@code none}, {@code fp16} or {@code bf16}; unset = none). */
    public static Compression fromEnvironment(java.util.Map<String, String> env) {
        return switch (io.kolo.bootstrap.KoloSettings.COMPRESSION.from(env)) {
            case "fp16" -> FP16;
            case "bf16" -> BF16;
            default -> NONE;
        };
    }
}
