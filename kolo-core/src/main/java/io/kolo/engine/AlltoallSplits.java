package io.kolo.engine;

import java.util.Arrays;

/**
 * Whether a rank's alltoall splits fit its tensor and its process set. Only the rank that gave them knows them (the
 * negotiation carries no splits), so it checks them when the op runs and tells the others through the exchange of
 * counts ({@link AlltoallExecutor}).
 */
final class AlltoallSplits {
    private AlltoallSplits() {
    }

    /** Null if {@code splits} fit a tensor of {@code rows} rows in a set of {@code size} ranks, else what is wrong. */
    static String problem(long[] splits, long rows, int size) {
        if (splits == null || splits.length != size) {
            return "gave " + (splits == null ? "no" : splits.length) + " splits for " + size + " ranks";
        }
        long sum = 0;
        for (long v : splits) {
            if (v < 0) {
                return "gave a negative split " + Arrays.toString(splits);
            }
            if (v > Long.MAX_VALUE - sum) {
                // Wrapped, the sum could match the rows and the alltoall run with splits no tensor has.
                return "gave splits " + Arrays.toString(splits) + " summing to more than " + Long.MAX_VALUE + " rows";
            }
            sum += v;
        }
        return sum == rows ? null : "gave splits " + Arrays.toString(splits) + " summing to " + sum
                + " for a first dimension of " + rows;
    }
}
