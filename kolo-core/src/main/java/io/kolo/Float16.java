package io.kolo;

/**
 * Conversions for IEEE-754 half-precision values held as raw bits in a {@code short}, the way Kolo (like DJL
 * and PyTorch) stores {@link DataType#FLOAT16} tensors on the JVM.
 *
 * <pre>{@code
 * short[] grads = new short[n];
 * grads[0] = Float16.fromFloat(0.1f);     // round to nearest even
 * float back = Float16.toFloat(grads[0]); // 0.099975586f, exact widening
 * }</pre>
 */
public final class Float16 {

    private Float16() {
    }

    /** Widens half-precision bits to the float they denote (exact; NaN stays NaN). */
    public static float toFloat(short bits) {
        return Float.float16ToFloat(bits);
    }

    /** Rounds {@code value} to the nearest half-precision value (ties to even; overflow becomes infinity). */
    public static short fromFloat(float value) {
        return Float.floatToFloat16(value);
    }
}
