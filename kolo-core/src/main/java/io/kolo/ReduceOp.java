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
    PRODUCT,
    /**
     * Adaptive summation of whole vectors, allreduce of floating-point tensors only: two gradients a and b combine as
     * {@code (1 - a·b / (2|a|²)) a + (1 - a·b / (2|b|²)) b} (orthogonal ones add up, parallel ones average), pairwise
     * as a tree over the ranks, each tensor on its own, as Horovod's {@code hvd.Adasum}. Any number of ranks.
     */
    ADASUM
}
