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
 * SIMD reduction loops through the Vector API for the types gradients and counters use (FLOAT32, FLOAT64, INT32,
 * INT64). C2 does not vectorise the scalar loops over {@link MemorySegment} in {@link Kernels} (two segments may
 * alias), several times slower on in-cache float32 data (JMH {@code KernelBenchmark}, docs/performance.md).
 *
 * <p>Loaded only when the JVM runs with {@code --add-modules jdk.incubator.vector} ({@link Kernels#VECTORS} is
 * checked without loading this class); {@code kolo run} adds it to the java commands it builds. Results are
 * bit-identical to the scalar loops: each lane applies the same IEEE operation ({@code Math.min}/{@code Math.max}
 * semantics for MIN/MAX, wrapping integer arithmetic), only several at once.
 */
final class VectorKernels {
    private static final ByteOrder ORDER = ByteOrder.nativeOrder();
    private static final VectorSpecies<Float> F = FloatVector.SPECIES_PREFERRED;
    private static final VectorSpecies<Double> D = DoubleVector.SPECIES_PREFERRED;
    private static final VectorSpecies<Integer> I = IntVector.SPECIES_PREFERRED;
    private static final VectorSpecies<Long> L = LongVector.SPECIES_PREFERRED;

    private VectorKernels() {
    }

    /**
     * Reduces the leading whole vectors of the range and returns how many elements it covered (a multiple of the
     * vector length; 0 when {@code type}/{@code op} has no vector loop here); the caller finishes the tail.
     */
    static long reduce(MemorySegment a, long ao, MemorySegment b, long bo, long n, DataType type, Reduction op) {
        return switch (type) {
            case FLOAT32 -> float32(a, ao, b, bo, n, op);
            case FLOAT64 -> float64(a, ao, b, bo, n, op);
            case INT32 -> int32(a, ao, b, bo, n, op);
            case INT64 -> int64(a, ao, b, bo, n, op);
            default -> 0;
        };
    }

    // One loop per (type, operation) with the operation spelt out: the Vector API compiles to SIMD instructions only
    // when the operation is a constant where C2 sees it.

    private static long float32(MemorySegment a, long ao, MemorySegment b, long bo, long n, Reduction op) {
        long step = F.length();
        long upper = n - n % step;
        switch (op) {
            case SUM -> {
                for (long i = 0; i < upper; i += step) {
                    long ap = ao + i * 4;
                    FloatVector.fromMemorySegment(F, a, ap, ORDER).add(FloatVector.fromMemorySegment(F, b, bo + i * 4, ORDER))
                            .intoMemorySegment(a, ap, ORDER);
                }
            }
            case PRODUCT -> {
                for (long i = 0; i < upper; i += step) {
                    long ap = ao + i * 4;
                    FloatVector.fromMemorySegment(F, a, ap, ORDER).mul(FloatVector.fromMemorySegment(F, b, bo + i * 4, ORDER))
                            .intoMemorySegment(a, ap, ORDER);
                }
            }
            case MIN -> {
                for (long i = 0; i < upper; i += step) {
                    long ap = ao + i * 4;
                    FloatVector.fromMemorySegment(F, a, ap, ORDER).min(FloatVector.fromMemorySegment(F, b, bo + i * 4, ORDER))
                            .intoMemorySegment(a, ap, ORDER);
                }
            }
            case MAX -> {
                for (long i = 0; i < upper; i += step) {
                    long ap = ao + i * 4;
                    FloatVector.fromMemorySegment(F, a, ap, ORDER).max(FloatVector.fromMemorySegment(F, b, bo + i * 4, ORDER))
                            .intoMemorySegment(a, ap, ORDER);
                }
            }
            default -> {
                return 0;
            }
        }
        return upper;
    }

    private static long float64(MemorySegment a, long ao, MemorySegment b, long bo, long n, Reduction op) {
        long step = D.length();
        long upper = n - n % step;
        switch (op) {
            case SUM -> {
                for (long i = 0; i < upper; i += step) {
                    long ap = ao + i * 8;
                    DoubleVector.fromMemorySegment(D, a, ap, ORDER).add(DoubleVector.fromMemorySegment(D, b, bo + i * 8, ORDER))
                            .intoMemorySegment(a, ap, ORDER);
                }
            }
            case PRODUCT -> {
                for (long i = 0; i < upper; i += step) {
                    long ap = ao + i * 8;
                    DoubleVector.fromMemorySegment(D, a, ap, ORDER).mul(DoubleVector.fromMemorySegment(D, b, bo + i * 8, ORDER))
                            .intoMemorySegment(a, ap, ORDER);
                }
            }
            case MIN -> {
                for (long i = 0; i < upper; i += step) {
                    long ap = ao + i * 8;
                    DoubleVector.fromMemorySegment(D, a, ap, ORDER).min(DoubleVector.fromMemorySegment(D, b, bo + i * 8, ORDER))
                            .intoMemorySegment(a, ap, ORDER);
                }
            }
            case MAX -> {
                for (long i = 0; i < upper; i += step) {
                    long ap = ao + i * 8;
                    DoubleVector.fromMemorySegment(D, a, ap, ORDER).max(DoubleVector.fromMemorySegment(D, b, bo + i * 8, ORDER))
                            .intoMemorySegment(a, ap, ORDER);
                }
            }
            default -> {
                return 0;
            }
        }
        return upper;
    }

    private static long int32(MemorySegment a, long ao, MemorySegment b, long bo, long n, Reduction op) {
        long step = I.length();
        long upper = n - n % step;
        switch (op) {
            case SUM -> {
                for (long i = 0; i < upper; i += step) {
                    long ap = ao + i * 4;
                    IntVector.fromMemorySegment(I, a, ap, ORDER).add(IntVector.fromMemorySegment(I, b, bo + i * 4, ORDER))
                            .intoMemorySegment(a, ap, ORDER);
                }
            }
            case MIN -> {
                for (long i = 0; i < upper; i += step) {
                    long ap = ao + i * 4;
                    IntVector.fromMemorySegment(I, a, ap, ORDER).min(IntVector.fromMemorySegment(I, b, bo + i * 4, ORDER))
                            .intoMemorySegment(a, ap, ORDER);
                }
            }
            case MAX -> {
                for (long i = 0; i < upper; i += step) {
                    long ap = ao + i * 4;
                    IntVector.fromMemorySegment(I, a, ap, ORDER).max(IntVector.fromMemorySegment(I, b, bo + i * 4, ORDER))
                            .intoMemorySegment(a, ap, ORDER);
                }
            }
            default -> {
                return 0;
            }
        }
        return upper;
    }

    private static long int64(MemorySegment a, long ao, MemorySegment b, long bo, long n, Reduction op) {
        long step = L.length();
        long upper = n - n % step;
        switch (op) {
            case SUM -> {
                for (long i = 0; i < upper; i += step) {
                    long ap = ao + i * 8;
                    LongVector.fromMemorySegment(L, a, ap, ORDER).add(LongVector.fromMemorySegment(L, b, bo + i * 8, ORDER))
                            .intoMemorySegment(a, ap, ORDER);
                }
            }
            case MIN -> {
                for (long i = 0; i < upper; i += step) {
                    long ap = ao + i * 8;
                    LongVector.fromMemorySegment(L, a, ap, ORDER).min(LongVector.fromMemorySegment(L, b, bo + i * 8, ORDER))
                            .intoMemorySegment(a, ap, ORDER);
                }
            }
            case MAX -> {
                for (long i = 0; i < upper; i += step) {
                    long ap = ao + i * 8;
                    LongVector.fromMemorySegment(L, a, ap, ORDER).max(LongVector.fromMemorySegment(L, b, bo + i * 8, ORDER))
                            .intoMemorySegment(a, ap, ORDER);
                }
            }
            default -> {
                return 0;
            }
        }
        return upper;
    }
}
