package io.kolo.bench;

import io.kolo.BFloat16;
import io.kolo.Float16;
import io.kolo.Tensor;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Locale;

/**
 * What the benchmark's tensors hold: every rank fills what it sends with rank + 1 (small whole numbers, a size's worth
 * of them summed, exact in every element type), and the first result of each size is checked against that, so a
 * benchmark never reports the speed of a wrong answer.
 */
final class BenchValues {
    private BenchValues() {
    }

    /** Checks three elements of {@code result}, the first result of {@code collective} on {@code bytes}. */
    static void check(Collective collective, ElementType type, int rank, int size, long bytes, Tensor result) {
        long n = result.elements();
        long[] probes = {0, n / 2, n - 1};
        for (long i : probes) {
            if (n == 0) {
                break;
            }
            double expected = switch (collective) {
                case ALLREDUCE, REDUCESCATTER -> size * (size + 1) / 2.0;
                case BROADCAST -> 1;
                case ALLGATHER, ALLTOALL -> i / (n / size) + 1;
            };
            double actual = read(type, result.segment(), i);
            if (actual != expected) {
                throw new IllegalStateException(String.format(Locale.ROOT,
                        "%s of %s gave %s at element %d on rank %d, expected %s", collective.id(),
                        Sizes.format(bytes), actual, i, rank, expected));
            }
        }
    }

    static void fill(ElementType type, MemorySegment seg, long elements, float value) {
        switch (type) {
            case F32 -> {
                for (long i = 0; i < elements; i++) {
                    seg.setAtIndex(ValueLayout.JAVA_FLOAT, i, value);
                }
            }
            case F64 -> {
                for (long i = 0; i < elements; i++) {
                    seg.setAtIndex(ValueLayout.JAVA_DOUBLE, i, value);
                }
            }
            case BF16, F16 -> {
                short bits = type == ElementType.BF16 ? BFloat16.fromFloat(value) : Float16.fromFloat(value);
                for (long i = 0; i < elements; i++) {
                    seg.setAtIndex(ValueLayout.JAVA_SHORT, i, bits);
                }
            }
            case I32 -> {
                for (long i = 0; i < elements; i++) {
                    seg.setAtIndex(ValueLayout.JAVA_INT, i, (int) value);
                }
            }
            case I64 -> {
                for (long i = 0; i < elements; i++) {
                    seg.setAtIndex(ValueLayout.JAVA_LONG, i, (long) value);
                }
            }
        }
    }

    static double read(ElementType type, MemorySegment seg, long i) {
        return switch (type) {
            case F32 -> seg.getAtIndex(ValueLayout.JAVA_FLOAT, i);
            case F64 -> seg.getAtIndex(ValueLayout.JAVA_DOUBLE, i);
            case BF16 -> BFloat16.toFloat(seg.getAtIndex(ValueLayout.JAVA_SHORT, i));
            case F16 -> Float16.toFloat(seg.getAtIndex(ValueLayout.JAVA_SHORT, i));
            case I32 -> seg.getAtIndex(ValueLayout.JAVA_INT, i);
            case I64 -> seg.getAtIndex(ValueLayout.JAVA_LONG, i);
        };
    }
}
