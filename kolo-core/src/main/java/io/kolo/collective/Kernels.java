package io.kolo.collective;

import io.kolo.BFloat16;
import io.kolo.DataType;

import java.lang.foreign.MemorySegment;
import java.util.Objects;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_DOUBLE_UNALIGNED;
import static java.lang.foreign.ValueLayout.JAVA_FLOAT_UNALIGNED;
import static java.lang.foreign.ValueLayout.JAVA_INT_UNALIGNED;
import static java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED;
import static java.lang.foreign.ValueLayout.JAVA_SHORT_UNALIGNED;

/**
 * Element-wise kernels over raw memory, used by the collective algorithms and by the engine (AVERAGE is SUM
 * followed by {@link #scale}).
 *
 * <p>Each (type, operation) pair has its own counted loop with the dispatch outside it, so that C2 can
 * vectorise the loop body, and each loop is a method of its own: the JIT compiles a method at a time, and until it
 * has compiled a loop, each of its element accesses is a chain of calls. A method of one loop is compiled several
 * times sooner than one of four, so a program's first allreduce runs the loop interpreted for less long
 * (docs/performance.md, "First run"). Semantics:
 * <ul>
 *   <li>Integer SUM and PRODUCT wrap around as Java arithmetic does; UINT8 MIN/MAX compare unsigned.</li>
 *   <li>BAND/BOR are defined for integer types only.</li>
 *   <li>Floating-point MIN/MAX follow {@link Math#min(float, float)}: NaN wins, -0.0 is below +0.0.</li>
 *   <li>FLOAT16 and BFLOAT16 are widened to float, combined, and rounded back to nearest-even. A float has
 *       more than twice the precision of either plus two bits, so this double rounding gives the correctly
 *       rounded result of a single operation.</li>
 * </ul>
 * Offsets are in bytes; counts are in elements. Segments may overlap only if they are identical ranges.
 */
public final class Kernels {

    /**
     * Whether the Vector API loops ({@link VectorKernels}) run: the JVM has the incubator module
     * ({@code --add-modules jdk.incubator.vector}) and {@code -Dkolo.vectorKernels=false} does not switch them off.
     * Checked through the module layer so that {@link VectorKernels} is never loaded without it.
     */
    static final boolean VECTORS = ModuleLayer.boot().findModule("jdk.incubator.vector").isPresent()
            && !"false".equals(System.getProperty("kolo.vectorKernels"));

    /** Runs shorter than this gain nothing from a SIMD loop: its dispatch costs more than the few elements. */
    private static final long SHORT_RUN = 8;

    private Kernels() {
    }

    /** Whether this JVM reduces FLOAT32/FLOAT64/INT32/INT64 with SIMD loops (see {@link #VECTORS}). */
    static boolean vectorized() {
        return VECTORS;
    }

    /**
     * {@code acc[i] = op(acc[i], in[i])} for {@code count} elements of {@code type}.
     *
     * @throws IllegalArgumentException if {@code op} is not defined for {@code type} (BAND/BOR on floats)
     * @throws IndexOutOfBoundsException if a range lies outside its segment
     */
    public static void reduce(MemorySegment acc, long accOffset, MemorySegment in, long inOffset, long count,
                              DataType type, Reduction op) {
        Objects.requireNonNull(type, "type");
        Objects.requireNonNull(op, "op");
        long bytes = Math.multiplyExact(count, (long) type.byteSize());
        Objects.checkFromIndexSize(accOffset, bytes, acc.byteSize());
        Objects.checkFromIndexSize(inOffset, bytes, in.byteSize());
        // Only native memory reaches VectorKernels and the scalar loops here: a heap segment at a segment access makes
        // it polymorphic for every caller, native memory too (HeapKernels), and the Vector API's segment accessors are
        // slow on it (KernelBenchmark). A Java array is reached as an array: ArrayKernels (SIMD, native input) or
        // HeapKernels. A vote or a small payload is a few elements: no SIMD loop.
        if (VECTORS && count >= SHORT_RUN && in.isNative()) {
            long done = acc.isNative() ? VectorKernels.reduce(acc, accOffset, in, inOffset, count, type, op)
                    : ArrayKernels.reduce(acc, accOffset, in, inOffset, count, type, op);
            if (done > 0) {
                long skip = done * type.byteSize();
                reduceRest(acc, accOffset + skip, in, inOffset + skip, count - done, type, op);
                return;
            }
        }
        reduceRest(acc, accOffset, in, inOffset, count, type, op);
    }

    /** The elements no SIMD loop took: HeapKernels when a side is a Java array, else the scalar loops. */
    private static void reduceRest(MemorySegment acc, long accOffset, MemorySegment in, long inOffset, long count,
                                   DataType type, Reduction op) {
        boolean anyHeap = !acc.isNative() || !in.isNative();
        if (!anyHeap || count == 0 || !HeapKernels.reduce(acc, accOffset, in, inOffset, count, type, op)) {
            reduceScalar(acc, accOffset, in, inOffset, count, type, op);
        }
    }

    /** {@link #reduce} with the element-by-element loops only (no bounds checks: the caller made them). */
    static void reduceScalar(MemorySegment acc, long accOffset, MemorySegment in, long inOffset, long count,
                             DataType type, Reduction op) {
        switch (type) {
            case INT8 -> reduceInt8(acc, accOffset, in, inOffset, count, op);
            case UINT8 -> reduceUint8(acc, accOffset, in, inOffset, count, op);
            case INT16 -> reduceInt16(acc, accOffset, in, inOffset, count, op);
            case INT32 -> reduceInt32(acc, accOffset, in, inOffset, count, op);
            case INT64 -> reduceInt64(acc, accOffset, in, inOffset, count, op);
            case FLOAT16 -> reduceFloat16(acc, accOffset, in, inOffset, count, op);
            case BFLOAT16 -> reduceBFloat16(acc, accOffset, in, inOffset, count, op);
            case FLOAT32 -> reduceFloat32(acc, accOffset, in, inOffset, count, op);
            case FLOAT64 -> reduceFloat64(acc, accOffset, in, inOffset, count, op);
        }
    }

    /** True if {@link #reduce} accepts {@code op} for {@code type}. */
    public static boolean isDefined(DataType type, Reduction op) {
        return type.isInteger() || (op != Reduction.BAND && op != Reduction.BOR);
    }

    /**
     * Multiplies {@code count} elements of {@code type} in place by {@code factor}.
     *
     * <p>Every product is computed in double and then converted once: FLOAT32 is rounded to float (so the
     * factor is not pre-rounded to float, which would add a second error), FLOAT16/BFLOAT16 go through float
     * to their own precision, and integer types are truncated toward zero and then narrowed to their width
     * (wrapping, as a Java cast does; NaN becomes 0). INT64 values beyond 2^53 lose low bits in the double.
     */
    public static void scale(MemorySegment seg, long offset, long count, DataType type, double factor) {
        Objects.requireNonNull(type, "type");
        long bytes = Math.multiplyExact(count, (long) type.byteSize());
        Objects.checkFromIndexSize(offset, bytes, seg.byteSize());
        if (!seg.isNative() && HeapKernels.scale(seg, offset, count, type, factor)) {
            return; // a Java array's memory, scaled as an array (HeapKernels says why)
        }
        switch (type) {
            case INT8 -> scaleInt8(seg, offset, count, factor);
            case UINT8 -> scaleUint8(seg, offset, count, factor);
            case INT16 -> scaleInt16(seg, offset, count, factor);
            case INT32 -> scaleInt32(seg, offset, count, factor);
            case INT64 -> scaleInt64(seg, offset, count, factor);
            case FLOAT16 -> scaleFloat16(seg, offset, count, factor);
            case BFLOAT16 -> scaleBFloat16(seg, offset, count, factor);
            case FLOAT32 -> scaleFloat32(seg, offset, count, factor);
            case FLOAT64 -> scaleFloat64(seg, offset, count, factor);
        }
    }

    private static void scaleInt8(MemorySegment seg, long offset, long count, double factor) {
        for (long i = 0; i < count; i++) {
            seg.set(JAVA_BYTE, offset + i, (byte) (long) (seg.get(JAVA_BYTE, offset + i) * factor));
        }
    }

    private static void scaleUint8(MemorySegment seg, long offset, long count, double factor) {
        for (long i = 0; i < count; i++) {
            seg.set(JAVA_BYTE, offset + i,
                    (byte) (long) (Byte.toUnsignedInt(seg.get(JAVA_BYTE, offset + i)) * factor));
        }
    }

    private static void scaleInt16(MemorySegment seg, long offset, long count, double factor) {
        for (long i = 0; i < count; i++) {
            long p = offset + i * 2;
            seg.set(JAVA_SHORT_UNALIGNED, p, (short) (long) (seg.get(JAVA_SHORT_UNALIGNED, p) * factor));
        }
    }

    private static void scaleInt32(MemorySegment seg, long offset, long count, double factor) {
        for (long i = 0; i < count; i++) {
            long p = offset + i * 4;
            seg.set(JAVA_INT_UNALIGNED, p, (int) (long) (seg.get(JAVA_INT_UNALIGNED, p) * factor));
        }
    }

    private static void scaleInt64(MemorySegment seg, long offset, long count, double factor) {
        for (long i = 0; i < count; i++) {
            long p = offset + i * 8;
            seg.set(JAVA_LONG_UNALIGNED, p, (long) (seg.get(JAVA_LONG_UNALIGNED, p) * factor));
        }
    }

    private static void scaleFloat16(MemorySegment seg, long offset, long count, double factor) {
        for (long i = 0; i < count; i++) {
            long p = offset + i * 2;
            float v = Float.float16ToFloat(seg.get(JAVA_SHORT_UNALIGNED, p));
            seg.set(JAVA_SHORT_UNALIGNED, p, Float.floatToFloat16((float) (v * factor)));
        }
    }

    private static void scaleBFloat16(MemorySegment seg, long offset, long count, double factor) {
        for (long i = 0; i < count; i++) {
            long p = offset + i * 2;
            float v = BFloat16.toFloat(seg.get(JAVA_SHORT_UNALIGNED, p));
            seg.set(JAVA_SHORT_UNALIGNED, p, BFloat16.fromFloat((float) (v * factor)));
        }
    }

    private static void scaleFloat32(MemorySegment seg, long offset, long count, double factor) {
        for (long i = 0; i < count; i++) {
            long p = offset + i * 4;
            seg.set(JAVA_FLOAT_UNALIGNED, p, (float) (seg.get(JAVA_FLOAT_UNALIGNED, p) * factor));
        }
    }

    private static void scaleFloat64(MemorySegment seg, long offset, long count, double factor) {
        for (long i = 0; i < count; i++) {
            long p = offset + i * 8;
            seg.set(JAVA_DOUBLE_UNALIGNED, p, seg.get(JAVA_DOUBLE_UNALIGNED, p) * factor);
        }
    }

    private static IllegalArgumentException undefined(Reduction op, DataType type) {
        return new IllegalArgumentException(op + " is not defined for " + type + " (bitwise reductions need an integer type)");
    }

    private static void reduceInt8(MemorySegment a, long ao, MemorySegment b, long bo, long n, Reduction op) {
        switch (op) {
            case SUM -> sumInt8(a, ao, b, bo, n);
            case PRODUCT -> productInt8(a, ao, b, bo, n);
            case MIN -> minInt8(a, ao, b, bo, n);
            case MAX -> maxInt8(a, ao, b, bo, n);
            case BAND -> bandInt8(a, ao, b, bo, n);
            case BOR -> borInt8(a, ao, b, bo, n);
        }
    }

    private static void sumInt8(MemorySegment a, long ao, MemorySegment b, long bo, long n) {
        for (long i = 0; i < n; i++) {
            a.set(JAVA_BYTE, ao + i, (byte) (a.get(JAVA_BYTE, ao + i) + b.get(JAVA_BYTE, bo + i)));
        }
    }

    private static void productInt8(MemorySegment a, long ao, MemorySegment b, long bo, long n) {
        for (long i = 0; i < n; i++) {
            a.set(JAVA_BYTE, ao + i, (byte) (a.get(JAVA_BYTE, ao + i) * b.get(JAVA_BYTE, bo + i)));
        }
    }

    private static void minInt8(MemorySegment a, long ao, MemorySegment b, long bo, long n) {
        for (long i = 0; i < n; i++) {
            a.set(JAVA_BYTE, ao + i, (byte) (Math.min(a.get(JAVA_BYTE, ao + i), b.get(JAVA_BYTE, bo + i))));
        }
    }

    private static void maxInt8(MemorySegment a, long ao, MemorySegment b, long bo, long n) {
        for (long i = 0; i < n; i++) {
            a.set(JAVA_BYTE, ao + i, (byte) (Math.max(a.get(JAVA_BYTE, ao + i), b.get(JAVA_BYTE, bo + i))));
        }
    }

    private static void bandInt8(MemorySegment a, long ao, MemorySegment b, long bo, long n) {
        for (long i = 0; i < n; i++) {
            a.set(JAVA_BYTE, ao + i, (byte) (a.get(JAVA_BYTE, ao + i) & b.get(JAVA_BYTE, bo + i)));
        }
    }

    private static void borInt8(MemorySegment a, long ao, MemorySegment b, long bo, long n) {
        for (long i = 0; i < n; i++) {
            a.set(JAVA_BYTE, ao + i, (byte) (a.get(JAVA_BYTE, ao + i) | b.get(JAVA_BYTE, bo + i)));
        }
    }

    private static void reduceInt16(MemorySegment a, long ao, MemorySegment b, long bo, long n, Reduction op) {
        switch (op) {
            case SUM -> sumInt16(a, ao, b, bo, n);
            case PRODUCT -> productInt16(a, ao, b, bo, n);
            case MIN -> minInt16(a, ao, b, bo, n);
            case MAX -> maxInt16(a, ao, b, bo, n);
            case BAND -> bandInt16(a, ao, b, bo, n);
            case BOR -> borInt16(a, ao, b, bo, n);
        }
    }

    private static void sumInt16(MemorySegment a, long ao, MemorySegment b, long bo, long n) {
        for (long i = 0; i < n; i++) {
            a.set(JAVA_SHORT_UNALIGNED, ao + i * 2, (short) (a.get(JAVA_SHORT_UNALIGNED, ao + i * 2) + b.get(JAVA_SHORT_UNALIGNED, bo + i * 2)));
        }
    }

    private static void productInt16(MemorySegment a, long ao, MemorySegment b, long bo, long n) {
        for (long i = 0; i < n; i++) {
            a.set(JAVA_SHORT_UNALIGNED, ao + i * 2, (short) (a.get(JAVA_SHORT_UNALIGNED, ao + i * 2) * b.get(JAVA_SHORT_UNALIGNED, bo + i * 2)));
        }
    }

    private static void minInt16(MemorySegment a, long ao, MemorySegment b, long bo, long n) {
        for (long i = 0; i < n; i++) {
            a.set(JAVA_SHORT_UNALIGNED, ao + i * 2, (short) (Math.min(a.get(JAVA_SHORT_UNALIGNED, ao + i * 2), b.get(JAVA_SHORT_UNALIGNED, bo + i * 2))));
        }
    }

    private static void maxInt16(MemorySegment a, long ao, MemorySegment b, long bo, long n) {
        for (long i = 0; i < n; i++) {
            a.set(JAVA_SHORT_UNALIGNED, ao + i * 2, (short) (Math.max(a.get(JAVA_SHORT_UNALIGNED, ao + i * 2), b.get(JAVA_SHORT_UNALIGNED, bo + i * 2))));
        }
    }

    private static void bandInt16(MemorySegment a, long ao, MemorySegment b, long bo, long n) {
        for (long i = 0; i < n; i++) {
            a.set(JAVA_SHORT_UNALIGNED, ao + i * 2, (short) (a.get(JAVA_SHORT_UNALIGNED, ao + i * 2) & b.get(JAVA_SHORT_UNALIGNED, bo + i * 2)));
        }
    }

    private static void borInt16(MemorySegment a, long ao, MemorySegment b, long bo, long n) {
        for (long i = 0; i < n; i++) {
            a.set(JAVA_SHORT_UNALIGNED, ao + i * 2, (short) (a.get(JAVA_SHORT_UNALIGNED, ao + i * 2) | b.get(JAVA_SHORT_UNALIGNED, bo + i * 2)));
        }
    }

    private static void reduceInt32(MemorySegment a, long ao, MemorySegment b, long bo, long n, Reduction op) {
        switch (op) {
            case SUM -> sumInt32(a, ao, b, bo, n);
            case PRODUCT -> productInt32(a, ao, b, bo, n);
            case MIN -> minInt32(a, ao, b, bo, n);
            case MAX -> maxInt32(a, ao, b, bo, n);
            case BAND -> bandInt32(a, ao, b, bo, n);
            case BOR -> borInt32(a, ao, b, bo, n);
        }
    }

    private static void sumInt32(MemorySegment a, long ao, MemorySegment b, long bo, long n) {
        for (long i = 0; i < n; i++) {
            a.set(JAVA_INT_UNALIGNED, ao + i * 4, a.get(JAVA_INT_UNALIGNED, ao + i * 4) + b.get(JAVA_INT_UNALIGNED, bo + i * 4));
        }
    }

    private static void productInt32(MemorySegment a, long ao, MemorySegment b, long bo, long n) {
        for (long i = 0; i < n; i++) {
            a.set(JAVA_INT_UNALIGNED, ao + i * 4, a.get(JAVA_INT_UNALIGNED, ao + i * 4) * b.get(JAVA_INT_UNALIGNED, bo + i * 4));
        }
    }

    private static void minInt32(MemorySegment a, long ao, MemorySegment b, long bo, long n) {
        for (long i = 0; i < n; i++) {
            a.set(JAVA_INT_UNALIGNED, ao + i * 4, Math.min(a.get(JAVA_INT_UNALIGNED, ao + i * 4), b.get(JAVA_INT_UNALIGNED, bo + i * 4)));
        }
    }

    private static void maxInt32(MemorySegment a, long ao, MemorySegment b, long bo, long n) {
        for (long i = 0; i < n; i++) {
            a.set(JAVA_INT_UNALIGNED, ao + i * 4, Math.max(a.get(JAVA_INT_UNALIGNED, ao + i * 4), b.get(JAVA_INT_UNALIGNED, bo + i * 4)));
        }
    }

    private static void bandInt32(MemorySegment a, long ao, MemorySegment b, long bo, long n) {
        for (long i = 0; i < n; i++) {
            a.set(JAVA_INT_UNALIGNED, ao + i * 4, a.get(JAVA_INT_UNALIGNED, ao + i * 4) & b.get(JAVA_INT_UNALIGNED, bo + i * 4));
        }
    }

    private static void borInt32(MemorySegment a, long ao, MemorySegment b, long bo, long n) {
        for (long i = 0; i < n; i++) {
            a.set(JAVA_INT_UNALIGNED, ao + i * 4, a.get(JAVA_INT_UNALIGNED, ao + i * 4) | b.get(JAVA_INT_UNALIGNED, bo + i * 4));
        }
    }

    private static void reduceInt64(MemorySegment a, long ao, MemorySegment b, long bo, long n, Reduction op) {
        switch (op) {
            case SUM -> sumInt64(a, ao, b, bo, n);
            case PRODUCT -> productInt64(a, ao, b, bo, n);
            case MIN -> minInt64(a, ao, b, bo, n);
            case MAX -> maxInt64(a, ao, b, bo, n);
            case BAND -> bandInt64(a, ao, b, bo, n);
            case BOR -> borInt64(a, ao, b, bo, n);
        }
    }

    private static void sumInt64(MemorySegment a, long ao, MemorySegment b, long bo, long n) {
        for (long i = 0; i < n; i++) {
            a.set(JAVA_LONG_UNALIGNED, ao + i * 8, a.get(JAVA_LONG_UNALIGNED, ao + i * 8) + b.get(JAVA_LONG_UNALIGNED, bo + i * 8));
        }
    }

    private static void productInt64(MemorySegment a, long ao, MemorySegment b, long bo, long n) {
        for (long i = 0; i < n; i++) {
            a.set(JAVA_LONG_UNALIGNED, ao + i * 8, a.get(JAVA_LONG_UNALIGNED, ao + i * 8) * b.get(JAVA_LONG_UNALIGNED, bo + i * 8));
        }
    }

    private static void minInt64(MemorySegment a, long ao, MemorySegment b, long bo, long n) {
        for (long i = 0; i < n; i++) {
            a.set(JAVA_LONG_UNALIGNED, ao + i * 8, Math.min(a.get(JAVA_LONG_UNALIGNED, ao + i * 8), b.get(JAVA_LONG_UNALIGNED, bo + i * 8)));
        }
    }

    private static void maxInt64(MemorySegment a, long ao, MemorySegment b, long bo, long n) {
        for (long i = 0; i < n; i++) {
            a.set(JAVA_LONG_UNALIGNED, ao + i * 8, Math.max(a.get(JAVA_LONG_UNALIGNED, ao + i * 8), b.get(JAVA_LONG_UNALIGNED, bo + i * 8)));
        }
    }

    private static void bandInt64(MemorySegment a, long ao, MemorySegment b, long bo, long n) {
        for (long i = 0; i < n; i++) {
            a.set(JAVA_LONG_UNALIGNED, ao + i * 8, a.get(JAVA_LONG_UNALIGNED, ao + i * 8) & b.get(JAVA_LONG_UNALIGNED, bo + i * 8));
        }
    }

    private static void borInt64(MemorySegment a, long ao, MemorySegment b, long bo, long n) {
        for (long i = 0; i < n; i++) {
            a.set(JAVA_LONG_UNALIGNED, ao + i * 8, a.get(JAVA_LONG_UNALIGNED, ao + i * 8) | b.get(JAVA_LONG_UNALIGNED, bo + i * 8));
        }
    }

    private static void reduceUint8(MemorySegment a, long ao, MemorySegment b, long bo, long n, Reduction op) {
        switch (op) {
            case MIN -> minUint8(a, ao, b, bo, n);
            case MAX -> maxUint8(a, ao, b, bo, n);
            // Two's-complement wrap-around makes these bit-for-bit the same as the signed kernels.
            default -> reduceInt8(a, ao, b, bo, n, op);
        }
    }

    private static void minUint8(MemorySegment a, long ao, MemorySegment b, long bo, long n) {
        for (long i = 0; i < n; i++) {
            a.set(JAVA_BYTE, ao + i, (byte) (Math.min(Byte.toUnsignedInt(a.get(JAVA_BYTE, ao + i)), Byte.toUnsignedInt(b.get(JAVA_BYTE, bo + i)))));
        }
    }

    private static void maxUint8(MemorySegment a, long ao, MemorySegment b, long bo, long n) {
        for (long i = 0; i < n; i++) {
            a.set(JAVA_BYTE, ao + i, (byte) (Math.max(Byte.toUnsignedInt(a.get(JAVA_BYTE, ao + i)), Byte.toUnsignedInt(b.get(JAVA_BYTE, bo + i)))));
        }
    }

    private static void reduceFloat32(MemorySegment a, long ao, MemorySegment b, long bo, long n, Reduction op) {
        switch (op) {
            case SUM -> sumFloat32(a, ao, b, bo, n);
            case PRODUCT -> productFloat32(a, ao, b, bo, n);
            case MIN -> minFloat32(a, ao, b, bo, n);
            case MAX -> maxFloat32(a, ao, b, bo, n);
            default -> throw undefined(op, DataType.FLOAT32);
        }
    }

    private static void sumFloat32(MemorySegment a, long ao, MemorySegment b, long bo, long n) {
        for (long i = 0; i < n; i++) {
            a.set(JAVA_FLOAT_UNALIGNED, ao + i * 4, a.get(JAVA_FLOAT_UNALIGNED, ao + i * 4) + b.get(JAVA_FLOAT_UNALIGNED, bo + i * 4));
        }
    }

    private static void productFloat32(MemorySegment a, long ao, MemorySegment b, long bo, long n) {
        for (long i = 0; i < n; i++) {
            a.set(JAVA_FLOAT_UNALIGNED, ao + i * 4, a.get(JAVA_FLOAT_UNALIGNED, ao + i * 4) * b.get(JAVA_FLOAT_UNALIGNED, bo + i * 4));
        }
    }

    private static void minFloat32(MemorySegment a, long ao, MemorySegment b, long bo, long n) {
        for (long i = 0; i < n; i++) {
            a.set(JAVA_FLOAT_UNALIGNED, ao + i * 4, Math.min(a.get(JAVA_FLOAT_UNALIGNED, ao + i * 4), b.get(JAVA_FLOAT_UNALIGNED, bo + i * 4)));
        }
    }

    private static void maxFloat32(MemorySegment a, long ao, MemorySegment b, long bo, long n) {
        for (long i = 0; i < n; i++) {
            a.set(JAVA_FLOAT_UNALIGNED, ao + i * 4, Math.max(a.get(JAVA_FLOAT_UNALIGNED, ao + i * 4), b.get(JAVA_FLOAT_UNALIGNED, bo + i * 4)));
        }
    }

    private static void reduceFloat64(MemorySegment a, long ao, MemorySegment b, long bo, long n, Reduction op) {
        switch (op) {
            case SUM -> sumFloat64(a, ao, b, bo, n);
            case PRODUCT -> productFloat64(a, ao, b, bo, n);
            case MIN -> minFloat64(a, ao, b, bo, n);
            case MAX -> maxFloat64(a, ao, b, bo, n);
            default -> throw undefined(op, DataType.FLOAT64);
        }
    }

    private static void sumFloat64(MemorySegment a, long ao, MemorySegment b, long bo, long n) {
        for (long i = 0; i < n; i++) {
            a.set(JAVA_DOUBLE_UNALIGNED, ao + i * 8, a.get(JAVA_DOUBLE_UNALIGNED, ao + i * 8) + b.get(JAVA_DOUBLE_UNALIGNED, bo + i * 8));
        }
    }

    private static void productFloat64(MemorySegment a, long ao, MemorySegment b, long bo, long n) {
        for (long i = 0; i < n; i++) {
            a.set(JAVA_DOUBLE_UNALIGNED, ao + i * 8, a.get(JAVA_DOUBLE_UNALIGNED, ao + i * 8) * b.get(JAVA_DOUBLE_UNALIGNED, bo + i * 8));
        }
    }

    private static void minFloat64(MemorySegment a, long ao, MemorySegment b, long bo, long n) {
        for (long i = 0; i < n; i++) {
            a.set(JAVA_DOUBLE_UNALIGNED, ao + i * 8, Math.min(a.get(JAVA_DOUBLE_UNALIGNED, ao + i * 8), b.get(JAVA_DOUBLE_UNALIGNED, bo + i * 8)));
        }
    }

    private static void maxFloat64(MemorySegment a, long ao, MemorySegment b, long bo, long n) {
        for (long i = 0; i < n; i++) {
            a.set(JAVA_DOUBLE_UNALIGNED, ao + i * 8, Math.max(a.get(JAVA_DOUBLE_UNALIGNED, ao + i * 8), b.get(JAVA_DOUBLE_UNALIGNED, bo + i * 8)));
        }
    }

    private static void reduceFloat16(MemorySegment a, long ao, MemorySegment b, long bo, long n, Reduction op) {
        switch (op) {
            case SUM -> sumFloat16(a, ao, b, bo, n);
            case PRODUCT -> productFloat16(a, ao, b, bo, n);
            case MIN -> minFloat16(a, ao, b, bo, n);
            case MAX -> maxFloat16(a, ao, b, bo, n);
            default -> throw undefined(op, DataType.FLOAT16);
        }
    }

    private static void sumFloat16(MemorySegment a, long ao, MemorySegment b, long bo, long n) {
        for (long i = 0; i < n; i++) {
            a.set(JAVA_SHORT_UNALIGNED, ao + i * 2, Float.floatToFloat16(Float.float16ToFloat(a.get(JAVA_SHORT_UNALIGNED, ao + i * 2)) + Float.float16ToFloat(b.get(JAVA_SHORT_UNALIGNED, bo + i * 2))));
        }
    }

    private static void productFloat16(MemorySegment a, long ao, MemorySegment b, long bo, long n) {
        for (long i = 0; i < n; i++) {
            a.set(JAVA_SHORT_UNALIGNED, ao + i * 2, Float.floatToFloat16(Float.float16ToFloat(a.get(JAVA_SHORT_UNALIGNED, ao + i * 2)) * Float.float16ToFloat(b.get(JAVA_SHORT_UNALIGNED, bo + i * 2))));
        }
    }

    private static void minFloat16(MemorySegment a, long ao, MemorySegment b, long bo, long n) {
        for (long i = 0; i < n; i++) {
            a.set(JAVA_SHORT_UNALIGNED, ao + i * 2, Float.floatToFloat16(Math.min(Float.float16ToFloat(a.get(JAVA_SHORT_UNALIGNED, ao + i * 2)), Float.float16ToFloat(b.get(JAVA_SHORT_UNALIGNED, bo + i * 2)))));
        }
    }

    private static void maxFloat16(MemorySegment a, long ao, MemorySegment b, long bo, long n) {
        for (long i = 0; i < n; i++) {
            a.set(JAVA_SHORT_UNALIGNED, ao + i * 2, Float.floatToFloat16(Math.max(Float.float16ToFloat(a.get(JAVA_SHORT_UNALIGNED, ao + i * 2)), Float.float16ToFloat(b.get(JAVA_SHORT_UNALIGNED, bo + i * 2)))));
        }
    }

    private static void reduceBFloat16(MemorySegment a, long ao, MemorySegment b, long bo, long n, Reduction op) {
        switch (op) {
            case SUM -> sumBFloat16(a, ao, b, bo, n);
            case PRODUCT -> productBFloat16(a, ao, b, bo, n);
            case MIN -> minBFloat16(a, ao, b, bo, n);
            case MAX -> maxBFloat16(a, ao, b, bo, n);
            default -> throw undefined(op, DataType.BFLOAT16);
        }
    }

    private static void sumBFloat16(MemorySegment a, long ao, MemorySegment b, long bo, long n) {
        for (long i = 0; i < n; i++) {
            a.set(JAVA_SHORT_UNALIGNED, ao + i * 2, BFloat16.fromFloat(BFloat16.toFloat(a.get(JAVA_SHORT_UNALIGNED, ao + i * 2)) + BFloat16.toFloat(b.get(JAVA_SHORT_UNALIGNED, bo + i * 2))));
        }
    }

    private static void productBFloat16(MemorySegment a, long ao, MemorySegment b, long bo, long n) {
        for (long i = 0; i < n; i++) {
            a.set(JAVA_SHORT_UNALIGNED, ao + i * 2, BFloat16.fromFloat(BFloat16.toFloat(a.get(JAVA_SHORT_UNALIGNED, ao + i * 2)) * BFloat16.toFloat(b.get(JAVA_SHORT_UNALIGNED, bo + i * 2))));
        }
    }

    private static void minBFloat16(MemorySegment a, long ao, MemorySegment b, long bo, long n) {
        for (long i = 0; i < n; i++) {
            a.set(JAVA_SHORT_UNALIGNED, ao + i * 2, BFloat16.fromFloat(Math.min(BFloat16.toFloat(a.get(JAVA_SHORT_UNALIGNED, ao + i * 2)), BFloat16.toFloat(b.get(JAVA_SHORT_UNALIGNED, bo + i * 2)))));
        }
    }

    private static void maxBFloat16(MemorySegment a, long ao, MemorySegment b, long bo, long n) {
        for (long i = 0; i < n; i++) {
            a.set(JAVA_SHORT_UNALIGNED, ao + i * 2, BFloat16.fromFloat(Math.max(BFloat16.toFloat(a.get(JAVA_SHORT_UNALIGNED, ao + i * 2)), BFloat16.toFloat(b.get(JAVA_SHORT_UNALIGNED, bo + i * 2)))));
        }
    }

    /**
     * Integer division in place, truncating toward zero: how AVERAGE finishes on integer types, exactly (a
     * multiplication by {@code 1.0 / divisor} in double would turn 9 / 3 into 2.999... and truncate to 2).
     * Floating-point types are left to {@link #scale}.
     */
    public static void divide(MemorySegment seg, long offset, long count, DataType type, long divisor) {
        Objects.requireNonNull(type, "type");
        if (divisor == 0) {
            throw new IllegalArgumentException("division by zero");
        }
        long bytes = Math.multiplyExact(count, (long) type.byteSize());
        Objects.checkFromIndexSize(offset, bytes, seg.byteSize());
        switch (type) {
            case INT8 -> {
                for (long i = 0; i < count; i++) {
                    seg.set(JAVA_BYTE, offset + i, (byte) (seg.get(JAVA_BYTE, offset + i) / divisor));
                }
            }
            case UINT8 -> {
                for (long i = 0; i < count; i++) {
                    seg.set(JAVA_BYTE, offset + i, (byte) (Byte.toUnsignedInt(seg.get(JAVA_BYTE, offset + i)) / divisor));
                }
            }
            case INT16 -> {
                for (long i = 0; i < count; i++) {
                    long p = offset + i * 2;
                    seg.set(JAVA_SHORT_UNALIGNED, p, (short) (seg.get(JAVA_SHORT_UNALIGNED, p) / divisor));
                }
            }
            case INT32 -> {
                for (long i = 0; i < count; i++) {
                    long p = offset + i * 4;
                    seg.set(JAVA_INT_UNALIGNED, p, (int) (seg.get(JAVA_INT_UNALIGNED, p) / divisor));
                }
            }
            case INT64 -> {
                for (long i = 0; i < count; i++) {
                    long p = offset + i * 8;
                    seg.set(JAVA_LONG_UNALIGNED, p, seg.get(JAVA_LONG_UNALIGNED, p) / divisor);
                }
            }
            default -> throw new IllegalArgumentException("divide is for integer types, not " + type);
        }
    }
}
