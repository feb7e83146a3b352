package io.kolo.collective;

import io.kolo.BFloat16;
import io.kolo.DataType;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.SplittableRandom;

/**
 * Test-side element access and a reference reduction. Values travel as longs: integer types wrap on store, float
 * types hold small integers so every intermediate result is exact whatever the order of combination.
 */
final class Elements {

    private Elements() {
    }

    static MemorySegment allocate(Arena arena, long count, DataType type) {
        return arena.allocate(Math.max(1, count * type.byteSize()), 8);
    }

    static void put(MemorySegment s, DataType t, long i, long v) {
        long p = i * t.byteSize();
        switch (t) {
            case INT8, UINT8 -> s.set(ValueLayout.JAVA_BYTE, p, (byte) v);
            case INT16 -> s.set(ValueLayout.JAVA_SHORT_UNALIGNED, p, (short) v);
            case INT32 -> s.set(ValueLayout.JAVA_INT_UNALIGNED, p, (int) v);
            case INT64 -> s.set(ValueLayout.JAVA_LONG_UNALIGNED, p, v);
            case FLOAT16 -> s.set(ValueLayout.JAVA_SHORT_UNALIGNED, p, Float.floatToFloat16(v));
            case BFLOAT16 -> s.set(ValueLayout.JAVA_SHORT_UNALIGNED, p, BFloat16.fromFloat(v));
            case FLOAT32 -> s.set(ValueLayout.JAVA_FLOAT_UNALIGNED, p, v);
            case FLOAT64 -> s.set(ValueLayout.JAVA_DOUBLE_UNALIGNED, p, v);
        }
    }

    static long get(MemorySegment s, DataType t, long i) {
        long p = i * t.byteSize();
        return switch (t) {
            case INT8 -> s.get(ValueLayout.JAVA_BYTE, p);
            case UINT8 -> Byte.toUnsignedInt(s.get(ValueLayout.JAVA_BYTE, p));
            case INT16 -> s.get(ValueLayout.JAVA_SHORT_UNALIGNED, p);
            case INT32 -> s.get(ValueLayout.JAVA_INT_UNALIGNED, p);
            case INT64 -> s.get(ValueLayout.JAVA_LONG_UNALIGNED, p);
            case FLOAT16 -> exact(Float.float16ToFloat(s.get(ValueLayout.JAVA_SHORT_UNALIGNED, p)));
            case BFLOAT16 -> exact(BFloat16.toFloat(s.get(ValueLayout.JAVA_SHORT_UNALIGNED, p)));
            case FLOAT32 -> exact(s.get(ValueLayout.JAVA_FLOAT_UNALIGNED, p));
            case FLOAT64 -> exact(s.get(ValueLayout.JAVA_DOUBLE_UNALIGNED, p));
        };
    }

    private static long exact(double d) {
        if (d != Math.rint(d)) {
            throw new AssertionError("expected an integer value, got " + d);
        }
        return (long) d;
    }

    /** Narrows a long result the way the type stores it (wrap-around for integers). */
    static long normalize(DataType t, long v) {
        return switch (t) {
            case INT8 -> (byte) v;
            case UINT8 -> v & 0xFF;
            case INT16 -> (short) v;
            case INT32 -> (int) v;
            default -> v;
        };
    }

    /** Deterministic data for (seed, rank, element); floats stay small so sums/products are exact in bf16. */
    static long value(DataType t, Reduction op, long seed, int rank, long i) {
        SplittableRandom r = new SplittableRandom(seed * 1_000_003L + rank * 7_919L + i);
        if (t.isInteger()) {
            return normalize(t, r.nextLong());
        }
        if (op == Reduction.PRODUCT) {
            long v = 1 + r.nextInt(2);
            return r.nextBoolean() ? v : -v;
        }
        return r.nextInt(-16, 17);
    }

    static long combine(DataType t, Reduction op, long a, long b) {
        return switch (op) {
            case SUM -> normalize(t, a + b);
            case PRODUCT -> normalize(t, a * b);
            case MIN -> Math.min(a, b);
            case MAX -> Math.max(a, b);
            case BAND -> a & b;
            case BOR -> a | b;
        };
    }

    static long expected(DataType t, Reduction op, long seed, int ranks, long i) {
        long acc = value(t, op, seed, 0, i);
        for (int r = 1; r < ranks; r++) {
            acc = combine(t, op, acc, value(t, op, seed, r, i));
        }
        return acc;
    }
}
