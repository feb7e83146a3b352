package io.kolo;

/**
 * Conversions for bfloat16 values (the upper 16 bits of a float32) held as raw bits in a {@code short}, the way
 * Kolo stores {@link DataType#BFLOAT16} tensors on the JVM.
 *
 * <pre>{@code
 * short[] weights = new short[n];
 * weights[0] = BFloat16.fromFloat(3.14159f);  // 3.140625f after rounding to nearest even
 * float back = BFloat16.toFloat(weights[0]);  // exact widening
 * }</pre>
 */
public final class BFloat16 {

    private BFloat16() {
    }

    /** Widens bfloat16 bits to the float they denote (exact). */
    public static float toFloat(short bits) {
        return Float.intBitsToFloat((bits & 0xFFFF) << 16);
    }

    /**
     * Rounds {@code value} to the nearest bfloat16 (ties to even; overflow becomes infinity). A NaN stays a NaN
     * with its sign and top payload bits, forced quiet so that truncation cannot turn it into infinity.
     */
    public static short fromFloat(float value) {
        int bits = Float.floatToRawIntBits(value);
        if ((bits & 0x7FFF_FFFF) > 0x7F80_0000) {
            return (short) ((bits >>> 16) | 0x0040);
        }
        // Adding 0x7FFF plus the lowest kept bit rounds half-way cases to the even neighbour; a carry out of
        // the mantissa correctly bumps the exponent, up to infinity.
        int rounded = bits + 0x7FFF + ((bits >>> 16) & 1);
        return (short) (rounded >>> 16);
    }
}
