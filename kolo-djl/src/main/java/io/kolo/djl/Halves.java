package io.kolo.djl;

import io.kolo.BFloat16;

import java.nio.FloatBuffer;
import java.nio.ShortBuffer;

/** float32 to and from 16-bit wire formats, element by element, into preallocated buffers. */
final class Halves {
    private Halves() {
    }

    static void pack(FloatBuffer from, ShortBuffer to, Compression format) {
        int n = from.remaining();
        if (format == Compression.FP16) {
            for (int i = 0; i < n; i++) {
                to.put(i, Float.floatToFloat16(from.get(i)));
            }
        } else {
            for (int i = 0; i < n; i++) {
                to.put(i, BFloat16.fromFloat(from.get(i)));
            }
        }
    }

    static void unpack(ShortBuffer from, FloatBuffer to, Compression format) {
        int n = to.remaining();
        if (format == Compression.FP16) {
            for (int i = 0; i < n; i++) {
                to.put(i, Float.float16ToFloat(from.get(i)));
            }
        } else {
            for (int i = 0; i < n; i++) {
                to.put(i, BFloat16.toFloat(from.get(i)));
            }
        }
    }
}
