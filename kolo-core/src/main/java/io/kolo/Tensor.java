package io.kolo;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Objects;

/**
 * A typed, shaped view of memory that Kolo can reduce or move: a Java array or off-heap memory (a direct
 * {@link ByteBuffer} or a {@link MemorySegment}). In-place collectives ({@code allreduce}, {@code broadcast})
 * write into the same memory; the others return a new tensor of the same storage kind (an array of the same
 * Java type, or off-heap memory).
 *
 * <pre>{@code
 * float[] grad = ...;
 * comm.allreduce(Tensor.of(grad), ReduceOp.AVERAGE);     // grad now holds the average over ranks
 * Tensor rows = comm.allgather(Tensor.of(myRows, myRows.length / 4, 4));
 * float[] all = rows.floats();
 * }</pre>
 */
public final class Tensor {
    private final DataType type;
    private final long[] shape;
    private final Object array;
    private final MemorySegment segment;
    /** Derived once: the engine asks for both on every op. */
    private final long elements;
    private final MemorySegment exact;

    private Tensor(DataType type, long[] shape, Object array, MemorySegment segment) {
        for (long d : shape) {
            if (d < 0) {
                throw new IllegalArgumentException("negative dimension in shape " + Arrays.toString(shape));
            }
        }
        // Checked products: an overflow would wrap to a small size that the memory seems to hold, and the tensor would
        // claim elements it does not have.
        long bytes = byteSize(type, shape);
        if (bytes > segment.byteSize()) {
            throw new IllegalArgumentException("shape " + Arrays.toString(shape) + " of " + type + " needs "
                    + bytes + " bytes but the memory holds " + segment.byteSize());
        }
        this.type = type;
        this.shape = shape.clone();
        this.array = array;
        this.segment = segment;
        this.elements = bytes / type.byteSize();
        this.exact = segment.byteSize() == bytes ? segment : segment.asSlice(0, bytes);
    }

    /** The bytes of a tensor of {@code type} and {@code shape}, refusing a shape too large for any memory. */
    private static long byteSize(DataType type, long[] shape) {
        for (long d : shape) {
            if (d == 0) {
                return 0;
            }
        }
        long bytes = type.byteSize();
        for (long d : shape) {
            if (bytes > Long.MAX_VALUE / d) {
                throw new IllegalArgumentException("shape " + Arrays.toString(shape) + " of " + type + " has more than "
                        + Long.MAX_VALUE + " bytes; check the shape");
            }
            bytes *= d;
        }
        return bytes;
    }

    private static long[] shapeOr(long[] shape, long length) {
        return shape == null || shape.length == 0 ? new long[]{length} : shape;
    }

    /** A float32 tensor over {@code data}; without a shape it is 1-d. */
    public static Tensor of(float[] data, long... shape) {
        return new Tensor(DataType.FLOAT32, shapeOr(shape, data.length), data, MemorySegment.ofArray(data));
    }

    /** A float64 tensor over {@code data}; without a shape it is 1-d. */
    public static Tensor of(double[] data, long... shape) {
        return new Tensor(DataType.FLOAT64, shapeOr(shape, data.length), data, MemorySegment.ofArray(data));
    }

    /** An int32 tensor over {@code data}; without a shape it is 1-d. */
    public static Tensor of(int[] data, long... shape) {
        return new Tensor(DataType.INT32, shapeOr(shape, data.length), data, MemorySegment.ofArray(data));
    }

    /** An int64 tensor over {@code data}; without a shape it is 1-d. */
    public static Tensor of(long[] data, long... shape) {
        return new Tensor(DataType.INT64, shapeOr(shape, data.length), data, MemorySegment.ofArray(data));
    }

    /** An int16 tensor (use {@link #of(short[], DataType, long...)} for fp16/bf16 bits). */
    public static Tensor of(short[] data, long... shape) {
        return of(data, DataType.INT16, shape);
    }

    /** A 16-bit tensor: {@link DataType#INT16}, {@link DataType#FLOAT16} or {@link DataType#BFLOAT16} bits. */
    public static Tensor of(short[] data, DataType type, long... shape) {
        if (type.byteSize() != 2) {
            throw new IllegalArgumentException("short[] holds 16-bit values, not " + type);
        }
        return new Tensor(type, shapeOr(shape, data.length), data, MemorySegment.ofArray(data));
    }

    /** An int8 tensor (use {@link #of(byte[], DataType, long...)} for uint8). */
    public static Tensor of(byte[] data, long... shape) {
        return of(data, DataType.INT8, shape);
    }

    /** A tensor of an 8-bit {@code type} (INT8 or UINT8) over {@code data}; without a shape it is 1-d. */
    public static Tensor of(byte[] data, DataType type, long... shape) {
        if (type.byteSize() != 1) {
            throw new IllegalArgumentException("byte[] holds 8-bit values, not " + type);
        }
        return new Tensor(type, shapeOr(shape, data.length), data, MemorySegment.ofArray(data));
    }

    /**
     * Off-heap memory; elements start at the buffer's position, in native byte order: a buffer of elements wider than a
     * byte must say so ({@code buffer.order(ByteOrder.nativeOrder())}).
     */
    public static Tensor of(ByteBuffer direct, DataType type, long... shape) {
        if (!direct.isDirect()) {
            throw new IllegalArgumentException("Tensor.of(ByteBuffer) needs a direct buffer; wrap heap arrays with Tensor.of(array)");
        }
        // A new buffer is big-endian, and values put through it would be reduced as garbage on a little-endian host.
        if (type.byteSize() > 1 && direct.order() != java.nio.ByteOrder.nativeOrder()) {
            throw new IllegalArgumentException("Tensor.of(ByteBuffer): the buffer is " + direct.order() + " but Kolo"
                    + " reads and writes " + type + " in this machine's order, " + java.nio.ByteOrder.nativeOrder()
                    + "; call buffer.order(ByteOrder.nativeOrder()) before filling it");
        }
        MemorySegment seg = MemorySegment.ofBuffer(direct);
        return of(seg, type, shapeOr(shape, seg.byteSize() / type.byteSize()));
    }

    /** Off-heap (or heap) memory described by a segment, in native byte order. */
    public static Tensor of(MemorySegment memory, DataType type, long... shape) {
        Objects.requireNonNull(memory, "memory");
        return new Tensor(type, shapeOr(shape, memory.byteSize() / type.byteSize()), null, memory);
    }

    /**
     * A zeroed tensor of the same storage kind as {@code like}, for results: a Java array of the same kind when
     * {@code like} is one, Java heap memory when {@code like} is a heap segment
     * ({@link #of(MemorySegment, DataType, long...)} of an array's memory), else off-heap memory.
     */
    static Tensor allocateLike(Tensor like, DataType type, long[] shape) {
        long n = 1;
        for (long d : shape) {
            n = Math.multiplyExact(n, d);
        }
        long bytes = n * type.byteSize();
        int len = Math.toIntExact(like.array == null ? 0 : n);
        if (like.array == null && !like.segment.isNative()) {
            // long[]: aligned for every element type; the garbage collector reuses its memory, which fresh off-heap
            // memory for every result is not (each result then pays the page faults of new memory).
            MemorySegment seg = MemorySegment.ofArray(new long[Math.toIntExact(Math.ceilDiv(bytes, 8))]);
            return new Tensor(type, shape, null, seg.asSlice(0, bytes));
        }
        if (like.array == null) {
            MemorySegment seg = Arena.ofAuto().allocate(Math.max(1, bytes), 64);
            return new Tensor(type, shape, null, n == 0 ? seg.asSlice(0, 0) : seg.asSlice(0, bytes));
        }
        return switch (like.array) {
            case float[] a -> of(new float[len], shape);
            case double[] a -> of(new double[len], shape);
            case int[] a -> of(new int[len], shape);
            case long[] a -> of(new long[len], shape);
            case short[] a -> of(new short[len], type, shape);
            case byte[] a -> of(new byte[len], type, shape);
            default -> throw new IllegalStateException("unknown array type " + like.array.getClass());
        };
    }

    /** The element type. */
    public DataType dataType() {
        return type;
    }

    /** The shape, a copy. */
    public long[] shape() {
        return shape.clone();
    }

    /** The shape itself, not a copy, for callers in this package that copy it or only read it (an op copies it). */
    long[] shapeShared() {
        return shape;
    }

    /** Number of elements (product of the shape). */
    public long elements() {
        return elements;
    }

    /** The memory, sliced to exactly this tensor's bytes. */
    public MemorySegment segment() {
        return exact;
    }

    /** True for off-heap memory. */
    public boolean isNative() {
        return segment.isNative();
    }

    /** The {@code float[]} this tensor wraps (no copy); refused for another array or off-heap memory. */
    public float[] floats() {
        return array(float[].class);
    }

    /** The {@code double[]} this tensor wraps (no copy); refused for another array or off-heap memory. */
    public double[] doubles() {
        return array(double[].class);
    }

    /** The {@code int[]} this tensor wraps (no copy); refused for another array or off-heap memory. */
    public int[] ints() {
        return array(int[].class);
    }

    /** The {@code long[]} this tensor wraps (no copy); refused for another array or off-heap memory. */
    public long[] longs() {
        return array(long[].class);
    }

    /** The {@code short[]} this tensor wraps (no copy); refused for another array or off-heap memory. */
    public short[] shorts() {
        return array(short[].class);
    }

    /** The {@code byte[]} this tensor wraps (no copy); refused for another array or off-heap memory. */
    public byte[] bytes() {
        return array(byte[].class);
    }

    private <T> T array(Class<T> kind) {
        if (!kind.isInstance(array)) {
            throw new IllegalStateException("this tensor is " + (array == null ? "off-heap memory" : array.getClass().getSimpleName())
                    + " of " + type + ", not " + kind.getSimpleName() + "; use segment()");
        }
        return kind.cast(array);
    }

    @Override
    public String toString() {
        return "Tensor[" + type + Arrays.toString(shape) + (isNative() ? ", off-heap" : "") + "]";
    }
}
