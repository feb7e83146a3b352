package io.kolo;

/**
 * Element types Kolo can reduce and move. 16-bit floating-point values are held in Java {@code short}s
 * (their raw IEEE-754 half or bfloat16 bits), as in DJL and PyTorch.
 */
public enum DataType {
    /** 8-bit signed integer ({@code byte[]}). */
    INT8(1),
    /** 8-bit unsigned integer ({@code byte[]}, values 0..255). */
    UINT8(1),
    /** 16-bit signed integer ({@code short[]}). */
    INT16(2),
    /** 32-bit signed integer ({@code int[]}). */
    INT32(4),
    /** 64-bit signed integer ({@code long[]}). */
    INT64(8),
    /** IEEE-754 half precision, raw bits in a {@code short}. */
    FLOAT16(2),
    /** bfloat16 (the upper half of a float32), raw bits in a {@code short}. */
    BFLOAT16(2),
    /** IEEE-754 single precision ({@code float[]}). */
    FLOAT32(4),
    /** IEEE-754 double precision ({@code double[]}). */
    FLOAT64(8);

    private final int byteSize;

    DataType(int byteSize) {
        this.byteSize = byteSize;
    }

    /** Bytes per element. */
    public int byteSize() {
        return byteSize;
    }

    /** True for the floating-point types (what Adasum combines). */
    public boolean isFloatingPoint() {
        return this == FLOAT16 || this == BFLOAT16 || this == FLOAT32 || this == FLOAT64;
    }

    /** True for the integer types, where AVERAGE divides with truncation toward zero. */
    public boolean isInteger() {
        return this == INT8 || this == UINT8 || this == INT16 || this == INT32 || this == INT64;
    }
}
