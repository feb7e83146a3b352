package io.kolo.collective;

import io.kolo.DataType;

import java.lang.foreign.MemorySegment;

import static java.lang.foreign.ValueLayout.JAVA_DOUBLE_UNALIGNED;
import static java.lang.foreign.ValueLayout.JAVA_FLOAT_UNALIGNED;
import static java.lang.foreign.ValueLayout.JAVA_INT_UNALIGNED;
import static java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED;

/**
 * The element-by-element loops for a Java array's memory (a heap segment over a {@code float[]}, {@code double[]},
 * {@code int[]} or {@code long[]}): the array is read and written as an array, and a segment here is only ever native.
 *
 * <p>Why a class of its own: the JIT profiles the receiver of each segment access inside the JDK's accessor code, one
 * profile for all callers. A heap segment of any kind reaching the loops that native memory uses ({@link Kernels}'s
 * scalar loops) makes those accesses polymorphic, and every later loop over native memory, gradients included, runs
 * several times slower for the rest of the process: a program's few small {@code Kolo.allreduce(float[],
 * AVERAGE)} calls made a ResNet-18 step's native gradient averaging 4x slower
 * ({@code kolo-bench/scripts/averaging-breakdown.sh}, docs/training.md). So heap memory never reaches those loops.
 * Same results as {@link Kernels}'s loops, bit for bit: the same Java arithmetic on each element.
 */
final class HeapKernels {
    private HeapKernels() {
    }

    /**
     * {@link Kernels#reduce} when {@code acc} or {@code in} is a heap segment over an array of {@code type}'s Java type
     * (the other heap too, or native); returns false, doing nothing, when neither is (or the type has no loop here).
     * Bounds were checked by the caller.
     */
    static boolean reduce(MemorySegment acc, long accOffset, MemorySegment in, long inOffset, long count, DataType type,
                          Reduction op) {
        Object a = acc.heapBase().orElse(null);
        Object b = in.heapBase().orElse(null);
        if (a == null && b == null) {
            return false;
        }
        // A heap segment's address is its offset in bytes from the array's first element; a native side keeps its offset.
        long ai = a != null ? acc.address() + accOffset : accOffset;
        long bi = b != null ? in.address() + inOffset : inOffset;
        switch (type) {
            case FLOAT32 -> {
                if (!arrayOrNone(a, float[].class) || !arrayOrNone(b, float[].class)) {
                    return false;
                }
                float32((float[]) a, ai, (float[]) b, bi, acc, in, Math.toIntExact(count), op);
            }
            case FLOAT64 -> {
                if (!arrayOrNone(a, double[].class) || !arrayOrNone(b, double[].class)) {
                    return false;
                }
                float64((double[]) a, ai, (double[]) b, bi, acc, in, Math.toIntExact(count), op);
            }
            case INT32 -> {
                if (!arrayOrNone(a, int[].class) || !arrayOrNone(b, int[].class)) {
                    return false;
                }
                int32((int[]) a, ai, (int[]) b, bi, acc, in, Math.toIntExact(count), op);
            }
            case INT64 -> {
                if (!arrayOrNone(a, long[].class) || !arrayOrNone(b, long[].class)) {
                    return false;
                }
                int64((long[]) a, ai, (long[]) b, bi, acc, in, Math.toIntExact(count), op);
            }
            default -> {
                return false;
            }
        }
        return true;
    }

    /**
     * {@link Kernels#scale} when {@code seg} is a heap segment over an array of {@code type}'s Java type; false, doing
     * nothing, otherwise. Bounds were checked by the caller.
     */
    static boolean scale(MemorySegment seg, long offset, long count, DataType type, double factor) {
        Object base = seg.heapBase().orElse(null);
        if (base == null) {
            return false;
        }
        long at = seg.address() + offset;
        int n = Math.toIntExact(count);
        switch (type) {
            case FLOAT32 -> {
                if (!(base instanceof float[] a)) {
                    return false;
                }
                for (int i = 0, from = index(at, 4); i < n; i++) {
                    a[from + i] = (float) (a[from + i] * factor);
                }
            }
            case FLOAT64 -> {
                if (!(base instanceof double[] a)) {
                    return false;
                }
                for (int i = 0, from = index(at, 8); i < n; i++) {
                    a[from + i] = a[from + i] * factor;
                }
            }
            case INT32 -> {
                if (!(base instanceof int[] a)) {
                    return false;
                }
                for (int i = 0, from = index(at, 4); i < n; i++) {
                    a[from + i] = (int) (long) (a[from + i] * factor);
                }
            }
            case INT64 -> {
                if (!(base instanceof long[] a)) {
                    return false;
                }
                for (int i = 0, from = index(at, 8); i < n; i++) {
                    a[from + i] = (long) (a[from + i] * factor);
                }
            }
            default -> {
                return false;
            }
        }
        return true;
    }

    private static boolean arrayOrNone(Object base, Class<?> arrayType) {
        return base == null || base.getClass() == arrayType;
    }

    /** The array index of byte offset {@code at} (a heap segment's address is its offset from the first element). */
    private static int index(long at, int bytes) {
        return Math.toIntExact(at / bytes);
    }

    // One loop per type; each side is an array or, when its array is null, native memory. The operation is applied
    // through combine() inside the loop: these loops serve Java arrays, mostly a few elements each (metrics, counters),
    // where a loop per operation would buy nothing; large arrays with SIMD go to ArrayKernels.

    private static void float32(float[] a, long at, float[] b, long bt, MemorySegment as, MemorySegment bs, int n,
                                Reduction op) {
        int ai = a != null ? index(at, 4) : 0;
        int bi = b != null ? index(bt, 4) : 0;
        for (int i = 0; i < n; i++) {
            float x = a != null ? a[ai + i] : as.get(JAVA_FLOAT_UNALIGNED, at + 4L * i);
            float y = b != null ? b[bi + i] : bs.get(JAVA_FLOAT_UNALIGNED, bt + 4L * i);
            // Exact: a double holds more than twice a float's precision, so one operation rounded to double and then
            // to float is the float operation's own result.
            float r = (float) combine(op, x, y, DataType.FLOAT32);
            if (a != null) {
                a[ai + i] = r;
            } else {
                as.set(JAVA_FLOAT_UNALIGNED, at + 4L * i, r);
            }
        }
    }

    private static void float64(double[] a, long at, double[] b, long bt, MemorySegment as, MemorySegment bs, int n,
                                Reduction op) {
        int ai = a != null ? index(at, 8) : 0;
        int bi = b != null ? index(bt, 8) : 0;
        for (int i = 0; i < n; i++) {
            double x = a != null ? a[ai + i] : as.get(JAVA_DOUBLE_UNALIGNED, at + 8L * i);
            double y = b != null ? b[bi + i] : bs.get(JAVA_DOUBLE_UNALIGNED, bt + 8L * i);
            double r = combine(op, x, y, DataType.FLOAT64);
            if (a != null) {
                a[ai + i] = r;
            } else {
                as.set(JAVA_DOUBLE_UNALIGNED, at + 8L * i, r);
            }
        }
    }

    private static void int32(int[] a, long at, int[] b, long bt, MemorySegment as, MemorySegment bs, int n,
                              Reduction op) {
        int ai = a != null ? index(at, 4) : 0;
        int bi = b != null ? index(bt, 4) : 0;
        for (int i = 0; i < n; i++) {
            int x = a != null ? a[ai + i] : as.get(JAVA_INT_UNALIGNED, at + 4L * i);
            int y = b != null ? b[bi + i] : bs.get(JAVA_INT_UNALIGNED, bt + 4L * i);
            // The low 32 bits of the long result are the int operation's, wrap-around included.
            int r = (int) combine(op, x, y);
            if (a != null) {
                a[ai + i] = r;
            } else {
                as.set(JAVA_INT_UNALIGNED, at + 4L * i, r);
            }
        }
    }

    private static void int64(long[] a, long at, long[] b, long bt, MemorySegment as, MemorySegment bs, int n,
                              Reduction op) {
        int ai = a != null ? index(at, 8) : 0;
        int bi = b != null ? index(bt, 8) : 0;
        for (int i = 0; i < n; i++) {
            long x = a != null ? a[ai + i] : as.get(JAVA_LONG_UNALIGNED, at + 8L * i);
            long y = b != null ? b[bi + i] : bs.get(JAVA_LONG_UNALIGNED, bt + 8L * i);
            long r = combine(op, x, y);
            if (a != null) {
                a[ai + i] = r;
            } else {
                as.set(JAVA_LONG_UNALIGNED, at + 8L * i, r);
            }
        }
    }

    private static double combine(Reduction op, double x, double y, DataType type) {
        return switch (op) {
            case SUM -> x + y;
            case PRODUCT -> x * y;
            case MIN -> Math.min(x, y);
            case MAX -> Math.max(x, y);
            default -> throw undefined(op, type);
        };
    }

    private static long combine(Reduction op, long x, long y) {
        return switch (op) {
            case SUM -> x + y;
            case PRODUCT -> x * y;
            case MIN -> Math.min(x, y);
            case MAX -> Math.max(x, y);
            case BAND -> x & y;
            case BOR -> x | y;
        };
    }

    private static IllegalArgumentException undefined(Reduction op, DataType type) {
        return new IllegalArgumentException(op + " is not defined for " + type
                + " (bitwise reductions need an integer type)");
    }
}
