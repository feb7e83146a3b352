package io.kolo;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/** Narrows float32/float64 elements to 16-bit floats and widens them back, scaling on the way. */
final class Compressor {

    private Compressor() {
    }

    /** {@code to[i] = round16(from[i] * scale)}; the scale is applied in the source precision. */
    static void compress(MemorySegment from, DataType type, long count, double scale, MemorySegment to, DataType wire) {
        boolean half = wire == DataType.FLOAT16;
        if (type == DataType.FLOAT32) {
            float s = (float) scale;
            for (long i = 0; i < count; i++) {
                float v = from.getAtIndex(ValueLayout.JAVA_FLOAT_UNALIGNED, i);
                v = scale == 1.0 ? v : v * s;
                to.setAtIndex(ValueLayout.JAVA_SHORT_UNALIGNED, i, half ? Float.floatToFloat16(v) : BFloat16.fromFloat(v));
            }
        } else {
            for (long i = 0; i < count; i++) {
                float v = (float) (from.getAtIndex(ValueLayout.JAVA_DOUBLE_UNALIGNED, i) * scale);
                to.setAtIndex(ValueLayout.JAVA_SHORT_UNALIGNED, i, half ? Float.floatToFloat16(v) : BFloat16.fromFloat(v));
            }
        }
    }

    /** {@code to[i] = widen(from[i]) * scale}. */
    static void decompress(MemorySegment from, DataType wire, long count, double scale, MemorySegment to, DataType type) {
        boolean half = wire == DataType.FLOAT16;
        for (long i = 0; i < count; i++) {
            short bits = from.getAtIndex(ValueLayout.JAVA_SHORT_UNALIGNED, i);
            float v = half ? Float.float16ToFloat(bits) : BFloat16.toFloat(bits);
            if (type == DataType.FLOAT32) {
                to.setAtIndex(ValueLayout.JAVA_FLOAT_UNALIGNED, i, scale == 1.0 ? v : (float) (v * scale));
            } else {
                to.setAtIndex(ValueLayout.JAVA_DOUBLE_UNALIGNED, i, v * scale);
            }
        }
    }
}
