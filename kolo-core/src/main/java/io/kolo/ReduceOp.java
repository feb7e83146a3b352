package io.kolo;

/** How {@code allreduce} and {@code reducescatter} combine the ranks' values. */
public enum ReduceOp {
    /** Element-wise sum. */
    SUM,
    /** Element-wise sum divided by the number of ranks (integer types: truncated toward zero). */
    AVERAGE,
    /** Element-wise minimum. */
    MIN,
    /** Element-wise maximum. */
    MAX,
    /** Element-wise product. */
    PRODUCT
}
