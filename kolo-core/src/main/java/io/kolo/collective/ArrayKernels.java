package io.kolo.collective;

import io.kolo.DataType;
import jdk.incubator.vector.DoubleVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.LongVector;
import jdk.incubator.vector.VectorSpecies;

import java.lang.foreign.MemorySegment;
import java.nio.ByteOrder;

/**
 * SIMD reduction loops for an accumulator that is a Java array ({@code Kolo.allreduce(float[])}, a heap
 * {@link io.kolo.Tensor}), combined with an input segment of either kind. The Vector API reads and writes an array
 * through {@code fromArray}/{@code intoArray} at full speed, while its segment accessors take a slow path on heap
 * segments (JMH {@code KernelBenchmark}, docs/performance.md); so the array is reached as an array here, and
 * {@link VectorKernels} keeps the native-only loops, each call site seeing one kind of memory.
 *
 * <p>Same results as the scalar loops, bit for bit (see {@link VectorKernels}). Loaded only with the incubator module.
 */
final class ArrayKernels {
    private static final ByteOrder ORDER = ByteOrder.nativeOrder();
    private static final VectorSpecies<Float> F = FloatVector.SPECIES_PREFERRED;
    private static final VectorSpecies<Double> D = DoubleVector.SPECIES_PREFERRED;
    private static final VectorSpecies<Integer> I = IntVector.SPECIES_PREFERRED;
    private static final VectorSpecies<Long> L = LongVector.SPECIES_PREFERRED;

    private ArrayKernels() {
    }

    /**
     * Reduces the leading whole vectors of the range when {@code acc} is a heap segment over an array of
     * {@code type}'s Java type, and returns how many elements it covered (0 when it is not, or when {@code type}/{@code op}
     * has no loop here); the caller finishes the rest. Offsets in bytes, as {@link Kernels#reduce}.
     */
    static long reduce(MemorySegment acc, long accOffset, MemorySegment in, long inOffset, long count, DataType type,
                       Reduction op) {
        Object base = acc.heapBase().orElse(null);
        // A heap segment's address is its offset in bytes from the array's first element.
        long at = acc.address() + accOffset;
        return switch (type) {
            case FLOAT32 -> base instanceof float[] a ? float32(a, index(at, 4), in, inOffset, count, op) : 0;
            case FLOAT64 -> base instanceof double[] a ? float64(a, index(at, 8), in, inOffset, count, op) : 0;
            case INT32 -> base instanceof int[] a ? int32(a, index(at, 4), in, inOffset, count, op) : 0;
            case INT64 -> base instanceof long[] a ? int64(a, index(at, 8), in, inOffset, count, op) : 0;
            default -> 0;
        };
    }

    /** The array index of byte offset {@code at}; the kernels' callers only split tensors at element boundaries. */
    private static int index(long at, int bytes) {
        return Math.toIntExact(at / bytes);
    }

    // One loop per (type, operation) with the operation spelt out, as in VectorKernels.

    private static long float32(float[] a, int ai, MemorySegment b, long bo, long n, Reduction op) {
        int step = F.length();
        int upper = Math.toIntExact(n - n % step);
        switch (op) {
            case SUM -> {
                for (int i = 0; i < upper; i += step) {
                    FloatVector.fromArray(F, a, ai + i).add(FloatVector.fromMemorySegment(F, b, bo + (long) i * 4, ORDER))
                            .intoArray(a, ai + i);
                }
            }
            case PRODUCT -> {
                for (int i = 0; i < upper; i += step) {
                    FloatVector.fromArray(F, a, ai + i).mul(FloatVector.fromMemorySegment(F, b, bo + (long) i * 4, ORDER))
                            .intoArray(a, ai + i);
                }
            }
            case MIN -> {
                for (int i = 0; i < upper; i += step) {
                    FloatVector.fromArray(F, a, ai + i).min(FloatVector.fromMemorySegment(F, b, bo + (long) i * 4, ORDER))
                            .intoArray(a, ai + i);
                }
            }
            case MAX -> {
                for (int i = 0; i < upper; i += step) {
                    FloatVector.fromArray(F, a, ai + i).max(FloatVector.fromMemorySegment(F, b, bo + (long) i * 4, ORDER))
                            .intoArray(a, ai + i);
                }
            }
            default -> {
                return 0;
            }
        }
        return upper;
    }

    private static long float64(double[] a, int ai, MemorySegment b, long bo, long n, Reduction op) {
        int step = D.length();
        int upper = Math.toIntExact(n - n % step);
        switch (op) {
            case SUM -> {
                for (int i = 0; i < upper; i += step) {
                    DoubleVector.fromArray(D, a, ai + i).add(DoubleVector.fromMemorySegment(D, b, bo + (long) i * 8, ORDER))
                            .intoArray(a, ai + i);
                }
            }
            case PRODUCT -> {
                for (int i = 0; i < upper; i += step) {
                    DoubleVector.fromArray(D, a, ai + i).mul(DoubleVector.fromMemorySegment(D, b, bo + (long) i * 8, ORDER))
                            .intoArray(a, ai + i);
                }
            }
            case MIN -> {
                for (int i = 0; i < upper; i += step) {
                    DoubleVector.fromArray(D, a, ai + i).min(DoubleVector.fromMemorySegment(D, b, bo + (long) i * 8, ORDER))
                            .intoArray(a, ai + i);
                }
            }
            case MAX -> {
                for (int i = 0; i < upper; i += step) {
                    DoubleVector.fromArray(D, a, ai + i).max(DoubleVector.fromMemorySegment(D, b, bo + (long) i * 8, ORDER))
                            .intoArray(a, ai + i);
                }
            }
            default -> {
                return 0;
            }
        }
        return upper;
    }

    private static long int32(int[] a, int ai, MemorySegment b, long bo, long n, Reduction op) {
        int step = I.length();
        int upper = Math.toIntExact(n - n % step);
        switch (op) {
            case SUM -> {
                for (int i = 0; i < upper; i += step) {
                    IntVector.fromArray(I, a, ai + i).add(IntVector.fromMemorySegment(I, b, bo + (long) i * 4, ORDER))
                            .intoArray(a, ai + i);
                }
            }
            case MIN -> {
                for (int i = 0; i < upper; i += step) {
                    IntVector.fromArray(I, a, ai + i).min(IntVector.fromMemorySegment(I, b, bo + (long) i * 4, ORDER))
                            .intoArray(a, ai + i);
                }
            }
            case MAX -> {
                for (int i = 0; i < upper; i += step) {
                    IntVector.fromArray(I, a, ai + i).max(IntVector.fromMemorySegment(I, b, bo + (long) i * 4, ORDER))
                            .intoArray(a, ai + i);
                }
            }
            default -> {
                return 0;
            }
        }
        return upper;
    }

    private static long int64(long[] a, int ai, MemorySegment b, long bo, long n, Reduction op) {
        int step = L.length();
        int upper = Math.toIntExact(n - n % step);
        switch (op) {
            case SUM -> {
                for (int i = 0; i < upper; i += step) {
                    LongVector.fromArray(L, a, ai + i).add(LongVector.fromMemorySegment(L, b, bo + (long) i * 8, ORDER))
                            .intoArray(a, ai + i);
                }
            }
            case MIN -> {
                for (int i = 0; i < upper; i += step) {
                    LongVector.fromArray(L, a, ai + i).min(LongVector.fromMemorySegment(L, b, bo + (long) i * 8, ORDER))
                            .intoArray(a, ai + i);
                }
            }
            case MAX -> {
                for (int i = 0; i < upper; i += step) {
                    LongVector.fromArray(L, a, ai + i).max(LongVector.fromMemorySegment(L, b, bo + (long) i * 8, ORDER))
                            .intoArray(a, ai + i);
                }
            }
            default -> {
                return 0;
            }
        }
        return upper;
    }
}
