package io.kolo.collective;

import io.kolo.BFloat16;
import io.kolo.DataType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class KernelsTest {

    static Stream<Arguments> typesAndOps() {
        List<Arguments> out = new ArrayList<>();
        for (DataType t : DataType.values()) {
            for (Reduction op : Reduction.values()) {
                if (Kernels.isDefined(t, op)) {
                    out.add(Arguments.of(t, op));
                }
            }
        }
        return out.stream();
    }

    /** Independent per-element reference working on raw bits widened to long/float/double. */
    static long reference(DataType t, Reduction op, long a, long b) {
        switch (t) {
            case FLOAT32 -> {
                float x = Float.intBitsToFloat((int) a);
                float y = Float.intBitsToFloat((int) b);
                return Float.floatToRawIntBits(floatOp(op, x, y)) & 0xFFFF_FFFFL;
            }
            case FLOAT64 -> {
                double x = Double.longBitsToDouble(a);
                double y = Double.longBitsToDouble(b);
                double r = switch (op) {
                    case SUM -> x + y;
                    case PRODUCT -> x * y;
                    case MIN -> Math.min(x, y);
                    case MAX -> Math.max(x, y);
                    default -> throw new AssertionError();
                };
                return Double.doubleToRawLongBits(r);
            }
            case FLOAT16 -> {
                float r = floatOp(op, Float.float16ToFloat((short) a), Float.float16ToFloat((short) b));
                return Float.floatToFloat16(r) & 0xFFFF;
            }
            case BFLOAT16 -> {
                float r = floatOp(op, Float.intBitsToFloat((int) a << 16), Float.intBitsToFloat((int) b << 16));
                return BFloat16.fromFloat(r) & 0xFFFF;
            }
            default -> {
                return Elements.normalize(t, Elements.combine(t, op, a, b));
            }
        }
    }

    static float floatOp(Reduction op, float x, float y) {
        return switch (op) {
            case SUM -> x + y;
            case PRODUCT -> x * y;
            case MIN -> Math.min(x, y);
            case MAX -> Math.max(x, y);
            default -> throw new AssertionError();
        };
    }

    /** Raw element bits, sign-extended for signed integers, zero-extended for UINT8 and float bit patterns. */
    static long raw(MemorySegment s, DataType t, long i) {
        long p = i * t.byteSize();
        return switch (t) {
            case INT8 -> s.get(ValueLayout.JAVA_BYTE, p);
            case UINT8 -> Byte.toUnsignedInt(s.get(ValueLayout.JAVA_BYTE, p));
            case INT16 -> s.get(ValueLayout.JAVA_SHORT_UNALIGNED, p);
            case FLOAT16, BFLOAT16 -> s.get(ValueLayout.JAVA_SHORT_UNALIGNED, p) & 0xFFFF;
            case INT32 -> s.get(ValueLayout.JAVA_INT_UNALIGNED, p);
            case FLOAT32 -> s.get(ValueLayout.JAVA_INT_UNALIGNED, p) & 0xFFFF_FFFFL;
            case INT64, FLOAT64 -> s.get(ValueLayout.JAVA_LONG_UNALIGNED, p);
        };
    }

    static void randomBits(MemorySegment s, SplittableRandom r) {
        for (long i = 0; i < s.byteSize(); i++) {
            s.set(ValueLayout.JAVA_BYTE, i, (byte) r.nextInt());
        }
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("typesAndOps")
    void reduceMatchesAnElementWiseReferenceOnRandomBits(DataType type, Reduction op) {
        checkAgainstReference(type, op, (acc, accOffset, in, inOffset, count) ->
                Kernels.reduce(acc, accOffset, in, inOffset, count, type, op));
    }

    /** The element-by-element loops, which JVMs without the Vector API module run, on the same inputs. */
    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("typesAndOps")
    void scalarLoopsMatchTheReferenceToo(DataType type, Reduction op) {
        checkAgainstReference(type, op, (acc, accOffset, in, inOffset, count) ->
                Kernels.reduceScalar(acc, accOffset, in, inOffset, count, type, op));
    }

    /** Surefire adds the module as kolo run does, so the tests above cover the SIMD loops, not only the scalar ones. */
    @Test
    void theTestJvmReducesWithTheVectorApi() {
        assertTrue(Kernels.vectorized(), "run the tests with --add-modules=jdk.incubator.vector (the parent pom does)");
    }

    @FunctionalInterface
    private interface Reducer {
        void reduce(MemorySegment acc, long accOffset, MemorySegment in, long inOffset, long count);
    }

    private static void checkAgainstReference(DataType type, Reduction op, Reducer reducer) {
        SplittableRandom r = new SplittableRandom(type.ordinal() * 10L + op.ordinal());
        int esz = type.byteSize();
        // 1003 and 4099: whole SIMD vectors plus a tail the scalar loop finishes. Native memory takes VectorKernels'
        // loops, a byte[]'s memory the scalar ones, an array of the type's own Java type (float[] for FLOAT32: what
        // Kolo.allreduce(float[]) reduces into) ArrayKernels' loops, with a native input or an array input.
        record Case(int count, String acc, String in) {
        }
        List<Case> cases = new ArrayList<>();
        for (int count : new int[] {0, 1, 7, 1003, 4099}) {
            cases.add(new Case(count, "native", "native"));
        }
        cases.add(new Case(1003, "bytes", "bytes"));
        for (int count : new int[] {7, 1003, 4099}) {
            cases.add(new Case(count, "typed", "native"));
            cases.add(new Case(count, "typed", "typed"));
            cases.add(new Case(count, "native", "typed"));
        }
        for (Case c : cases) {
            int count = c.count();
            // Odd byte offsets check that unaligned layouts are used; a typed array is sliced at an element boundary
            // (a tensor's elements start on one), and not at its start, so its array index is computed, not assumed.
            long accOffset = c.acc().equals("typed") ? 2L * esz : 3;
            long inOffset = c.in().equals("typed") ? esz : 5;
            MemorySegment acc = memory(c.acc(), type, accOffset + (long) count * esz + 4 * esz);
            MemorySegment in = memory(c.in(), type, inOffset + (long) count * esz);
            randomBits(acc, r);
            randomBits(in, r);
            MemorySegment before = MemorySegment.ofArray(acc.toArray(ValueLayout.JAVA_BYTE));
            for (int rep = 0; rep < (count >= 1003 ? 20 : 1); rep++) {
                // Repetition gets the loop compiled, so the test also covers the optimised code.
                MemorySegment.copy(before, 0, acc, 0, acc.byteSize());
                reducer.reduce(acc, accOffset, in, inOffset, count);
            }
            MemorySegment a0 = before.asSlice(accOffset);
            MemorySegment a1 = acc.asSlice(accOffset);
            MemorySegment b = in.asSlice(inOffset);
            for (int i = 0; i < count; i++) {
                long expected = reference(type, op, raw(a0, type, i), raw(b, type, i));
                long actual = raw(a1, type, i);
                if (isNanBits(type, expected) && isNanBits(type, actual)) {
                    continue;
                }
                assertEquals(expected, actual, c + " element " + i);
            }
            for (long i = accOffset + (long) count * esz; i < acc.byteSize(); i++) {
                assertEquals(before.get(ValueLayout.JAVA_BYTE, i), acc.get(ValueLayout.JAVA_BYTE, i), "wrote past count");
            }
        }
    }

    /** {@code bytes} of native memory, of a byte[], or of an array of {@code type}'s own Java type. */
    private static MemorySegment memory(String kind, DataType type, long bytes) {
        int n = Math.toIntExact(bytes);
        return switch (kind) {
            case "native" -> Arena.ofAuto().allocate(bytes);
            case "bytes" -> MemorySegment.ofArray(new byte[n]);
            default -> switch (type) {
                case FLOAT32 -> MemorySegment.ofArray(new float[n / 4]);
                case FLOAT64 -> MemorySegment.ofArray(new double[n / 8]);
                case INT32 -> MemorySegment.ofArray(new int[n / 4]);
                case INT64 -> MemorySegment.ofArray(new long[n / 8]);
                case INT16, FLOAT16, BFLOAT16 -> MemorySegment.ofArray(new short[n / 2]);
                case INT8, UINT8 -> MemorySegment.ofArray(new byte[n]);
            };
        };
    }

    static boolean isNanBits(DataType t, long bits) {
        return switch (t) {
            case FLOAT16 -> Float.isNaN(Float.float16ToFloat((short) bits));
            case BFLOAT16 -> Float.isNaN(Float.intBitsToFloat((int) bits << 16));
            case FLOAT32 -> Float.isNaN(Float.intBitsToFloat((int) bits));
            case FLOAT64 -> Double.isNaN(Double.longBitsToDouble(bits));
            default -> false;
        };
    }

    @Test
    void uint8ComparesUnsignedWhereInt8ComparesSigned() {
        MemorySegment a = MemorySegment.ofArray(new byte[] {(byte) 200, 5});
        MemorySegment b = MemorySegment.ofArray(new byte[] {100, (byte) 250});
        Kernels.reduce(a, 0, b, 0, 2, DataType.UINT8, Reduction.MIN);
        assertEquals(100, a.get(ValueLayout.JAVA_BYTE, 0));
        assertEquals(5, a.get(ValueLayout.JAVA_BYTE, 1));
        MemorySegment c = MemorySegment.ofArray(new byte[] {(byte) 200});
        Kernels.reduce(c, 0, MemorySegment.ofArray(new byte[] {100}), 0, 1, DataType.INT8, Reduction.MIN);
        assertEquals((byte) 200, c.get(ValueLayout.JAVA_BYTE, 0));
    }

    @Test
    void integerSumWrapsAround() {
        MemorySegment a = MemorySegment.ofArray(new int[] {Integer.MAX_VALUE});
        Kernels.reduce(a, 0, MemorySegment.ofArray(new int[] {1}), 0, 1, DataType.INT32, Reduction.SUM);
        assertEquals(Integer.MIN_VALUE, a.get(ValueLayout.JAVA_INT, 0));
    }

    @Test
    void halfPrecisionSumRoundsToNearestEven() {
        MemorySegment a = MemorySegment.ofArray(new short[] {Float.floatToFloat16(2048f), Float.floatToFloat16(2048f)});
        MemorySegment b = MemorySegment.ofArray(new short[] {Float.floatToFloat16(1f), Float.floatToFloat16(3f)});
        Kernels.reduce(a, 0, b, 0, 2, DataType.FLOAT16, Reduction.SUM);
        assertEquals(2048f, Float.float16ToFloat(a.getAtIndex(ValueLayout.JAVA_SHORT, 0)));
        assertEquals(2052f, Float.float16ToFloat(a.getAtIndex(ValueLayout.JAVA_SHORT, 1)));
        MemorySegment x = MemorySegment.ofArray(new short[] {BFloat16.fromFloat(256f)});
        Kernels.reduce(x, 0, MemorySegment.ofArray(new short[] {BFloat16.fromFloat(3f)}), 0, 1,
                DataType.BFLOAT16, Reduction.SUM);
        assertEquals(260f, BFloat16.toFloat(x.getAtIndex(ValueLayout.JAVA_SHORT, 0)), "259 rounds to 260");
    }

    @ParameterizedTest
    @EnumSource(value = DataType.class, names = {"FLOAT16", "BFLOAT16", "FLOAT32", "FLOAT64"})
    void bitwiseReductionsAreUndefinedForFloats(DataType type) {
        MemorySegment a = MemorySegment.ofArray(new long[1]);
        assertThrows(IllegalArgumentException.class, () -> Kernels.reduce(a, 0, a, 0, 1, type, Reduction.BAND));
        assertThrows(IllegalArgumentException.class, () -> Kernels.reduce(a, 0, a, 0, 1, type, Reduction.BOR));
    }

    @Test
    void reduceChecksBounds() {
        MemorySegment a = MemorySegment.ofArray(new int[4]);
        assertThrows(IndexOutOfBoundsException.class,
                () -> Kernels.reduce(a, 4, a, 0, 4, DataType.INT32, Reduction.SUM));
    }

    @Test
    void scaleTruncatesIntegersTowardZeroAndNarrows() {
        MemorySegment i32 = MemorySegment.ofArray(new int[] {7, -7, 1_000_000_000});
        Kernels.scale(i32, 0, 3, DataType.INT32, 0.5);
        assertEquals(3, i32.getAtIndex(ValueLayout.JAVA_INT, 0));
        assertEquals(-3, i32.getAtIndex(ValueLayout.JAVA_INT, 1));
        assertEquals(500_000_000, i32.getAtIndex(ValueLayout.JAVA_INT, 2));
        MemorySegment i8 = MemorySegment.ofArray(new byte[] {100, -9});
        Kernels.scale(i8, 0, 2, DataType.INT8, 2.0);
        assertEquals((byte) 200, i8.get(ValueLayout.JAVA_BYTE, 0), "wraps like a Java cast");
        assertEquals(-18, i8.get(ValueLayout.JAVA_BYTE, 1));
        MemorySegment u8 = MemorySegment.ofArray(new byte[] {(byte) 201});
        Kernels.scale(u8, 0, 1, DataType.UINT8, 0.5);
        assertEquals(100, u8.get(ValueLayout.JAVA_BYTE, 0), "unsigned 201 / 2");
        MemorySegment i64 = MemorySegment.ofArray(new long[] {-10});
        Kernels.scale(i64, 0, 1, DataType.INT64, 1.0 / 3);
        assertEquals(-3, i64.getAtIndex(ValueLayout.JAVA_LONG, 0));
        MemorySegment i16 = MemorySegment.ofArray(new short[] {-32768});
        Kernels.scale(i16, 0, 1, DataType.INT16, 0.25);
        assertEquals(-8192, i16.getAtIndex(ValueLayout.JAVA_SHORT, 0));
    }

    @Test
    void scaleOfFloatsRoundsOnceFromDouble() {
        float x = 0.3f;
        MemorySegment f32 = MemorySegment.ofArray(new float[] {x, 5f});
        Kernels.scale(f32, 0, 1, DataType.FLOAT32, 0.1);
        assertEquals((float) (x * 0.1), f32.getAtIndex(ValueLayout.JAVA_FLOAT, 0));
        assertEquals(5f, f32.getAtIndex(ValueLayout.JAVA_FLOAT, 1), "only count elements");
        MemorySegment f64 = MemorySegment.ofArray(new double[] {3.0});
        Kernels.scale(f64, 0, 1, DataType.FLOAT64, 1.0 / 3);
        assertEquals(1.0, f64.getAtIndex(ValueLayout.JAVA_DOUBLE, 0));
        MemorySegment f16 = MemorySegment.ofArray(new short[] {Float.floatToFloat16(6f)});
        Kernels.scale(f16, 0, 1, DataType.FLOAT16, 0.25);
        assertEquals(1.5f, Float.float16ToFloat(f16.getAtIndex(ValueLayout.JAVA_SHORT, 0)));
        MemorySegment bf16 = MemorySegment.ofArray(new short[] {BFloat16.fromFloat(6f)});
        Kernels.scale(bf16, 0, 1, DataType.BFLOAT16, 0.25);
        assertEquals(1.5f, BFloat16.toFloat(bf16.getAtIndex(ValueLayout.JAVA_SHORT, 0)));
    }

    /**
     * A Java array's memory is scaled as an array (HeapKernels), native memory by the segment loops: the same bits for
     * every element of FLOAT32/FLOAT64/INT32/INT64, on a slice that starts past the array's first element, and nothing
     * written outside it.
     */
    @ParameterizedTest(name = "{0}")
    @EnumSource(value = DataType.class, names = {"FLOAT32", "FLOAT64", "INT32", "INT64"})
    void scaleOfAnArrayEqualsScaleOfNativeMemory(DataType type) {
        SplittableRandom r = new SplittableRandom(type.ordinal());
        int esz = type.byteSize();
        int count = 1003;
        for (double factor : new double[] {0.5, 1.0 / 3, -7.25, 1e-3}) {
            MemorySegment array = memory("typed", type, (long) (count + 4) * esz);
            randomBits(array, r);
            MemorySegment before = MemorySegment.ofArray(array.toArray(ValueLayout.JAVA_BYTE));
            MemorySegment nativeCopy = Arena.ofAuto().allocate(array.byteSize());
            MemorySegment.copy(before, 0, nativeCopy, 0, before.byteSize());
            Kernels.scale(array, 2L * esz, count, type, factor);
            Kernels.scale(nativeCopy, 2L * esz, count, type, factor);
            for (int i = 0; i < count + 4; i++) {
                long expected = raw(nativeCopy, type, i);
                long actual = raw(array, type, i);
                if (isNanBits(type, expected) && isNanBits(type, actual)) {
                    continue;
                }
                assertEquals(expected, actual, type + " x " + factor + " element " + i);
                if (i < 2 || i >= count + 2) {
                    assertEquals(raw(before, type, i), actual, "wrote outside the slice at element " + i);
                }
            }
        }
    }
}
