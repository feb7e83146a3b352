package io.kolo;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * The engine fuzzer's data: every element of every rank's input is a small integer derived from the seed, so any rank
 * can compute any other rank's input, and sums and products of a few ranks stay exact in every type.
 */
final class FuzzValues {
    /** Where a tensor's memory lives: a Java array, a native segment, or a direct buffer. */
    enum Memory { HEAP, NATIVE, BUFFER }

    private FuzzValues() {
    }

    /** Element {@code i} of {@code rank}'s input to op {@code opId}: in [-3, 3], or [0, 3] for unsigned bytes. */
    static long value(long seed, long opId, int rank, long i, DataType type) {
        long h = mix(seed ^ mix(opId * 0x9E3779B97F4A7C15L + rank) ^ (i * 0xC2B2AE3D27D4EB4FL));
        int v = (int) Math.floorMod(h, 7) - 3;
        return type == DataType.UINT8 ? Math.abs(v) : v;
    }

    static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }

    /** A tensor of {@code shape} in {@code memory}, holding {@code rank}'s input to op {@code opId}. */
    static Tensor input(long seed, long opId, int rank, DataType type, long[] shape, Memory memory) {
        Tensor t = allocate(type, shape, memory);
        MemorySegment seg = t.segment();
        for (long i = 0; i < t.elements(); i++) {
            set(seg, type, i, value(seed, opId, rank, i, type));
        }
        return t;
    }

    private static Tensor allocate(DataType type, long[] shape, Memory memory) {
        long n = 1;
        for (long d : shape) {
            n *= d;
        }
        int len = Math.toIntExact(n);
        return switch (memory) {
            case NATIVE -> Tensor.of(Arena.ofAuto().allocate(Math.max(1, n * type.byteSize()), 64)
                    .asSlice(0, n * type.byteSize()), type, shape);
            case BUFFER -> Tensor.of(ByteBuffer.allocateDirect(Math.max(1, len * type.byteSize()))
                    .order(ByteOrder.nativeOrder()), type, shape);
            case HEAP -> switch (type) {
                case INT8, UINT8 -> Tensor.of(new byte[len], type, shape);
                case INT16 -> Tensor.of(new short[len], type, shape);
                case FLOAT16, BFLOAT16 -> Tensor.of(new short[len], type, shape);
                case INT32 -> Tensor.of(new int[len], shape);
                case INT64 -> Tensor.of(new long[len], shape);
                case FLOAT32 -> Tensor.of(new float[len], shape);
                case FLOAT64 -> Tensor.of(new double[len], shape);
            };
        };
    }

    static void set(MemorySegment seg, DataType type, long i, double v) {
        switch (type) {
            case INT8, UINT8 -> seg.set(ValueLayout.JAVA_BYTE, i, (byte) (long) v);
            case INT16 -> seg.setAtIndex(ValueLayout.JAVA_SHORT_UNALIGNED, i, (short) (long) v);
            case INT32 -> seg.setAtIndex(ValueLayout.JAVA_INT_UNALIGNED, i, (int) (long) v);
            case INT64 -> seg.setAtIndex(ValueLayout.JAVA_LONG_UNALIGNED, i, (long) v);
            case FLOAT16 -> seg.setAtIndex(ValueLayout.JAVA_SHORT_UNALIGNED, i, Float16.fromFloat((float) v));
            case BFLOAT16 -> seg.setAtIndex(ValueLayout.JAVA_SHORT_UNALIGNED, i, BFloat16.fromFloat((float) v));
            case FLOAT32 -> seg.setAtIndex(ValueLayout.JAVA_FLOAT_UNALIGNED, i, (float) v);
            case FLOAT64 -> seg.setAtIndex(ValueLayout.JAVA_DOUBLE_UNALIGNED, i, v);
        }
    }

    static double get(MemorySegment seg, DataType type, long i) {
        return switch (type) {
            case INT8 -> seg.get(ValueLayout.JAVA_BYTE, i);
            case UINT8 -> Byte.toUnsignedInt(seg.get(ValueLayout.JAVA_BYTE, i));
            case INT16 -> seg.getAtIndex(ValueLayout.JAVA_SHORT_UNALIGNED, i);
            case INT32 -> seg.getAtIndex(ValueLayout.JAVA_INT_UNALIGNED, i);
            case INT64 -> seg.getAtIndex(ValueLayout.JAVA_LONG_UNALIGNED, i);
            case FLOAT16 -> Float16.toFloat(seg.getAtIndex(ValueLayout.JAVA_SHORT_UNALIGNED, i));
            case BFLOAT16 -> BFloat16.toFloat(seg.getAtIndex(ValueLayout.JAVA_SHORT_UNALIGNED, i));
            case FLOAT32 -> seg.getAtIndex(ValueLayout.JAVA_FLOAT_UNALIGNED, i);
            case FLOAT64 -> seg.getAtIndex(ValueLayout.JAVA_DOUBLE_UNALIGNED, i);
        };
    }

    /** An integer result as the type holds it: two's-complement wrap-around, as Java's own integer arithmetic. */
    static long wrap(long v, DataType type) {
        return switch (type) {
            case INT8 -> (byte) v;
            case UINT8 -> v & 0xFF;
            case INT16 -> (short) v;
            case INT32 -> (int) v;
            default -> v;
        };
    }

    /** Relative rounding allowance of a float type, for sums of a few rounded terms. */
    static double epsilon(DataType type) {
        return switch (type) {
            case FLOAT16 -> 8e-3;
            case BFLOAT16 -> 6e-2;
            case FLOAT32 -> 1e-5;
            default -> 1e-12;
        };
    }
}
