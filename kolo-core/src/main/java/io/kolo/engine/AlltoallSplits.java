package io.kolo.engine;

import java.util.Arrays;

/**
 * Whether a rank's alltoall splits fit its tensor and its process set. Only the rank that gave them knows them (the
 * negotiation carries no splits), so it checks them when the op runs and tells the others through the exchange of
 * counts ({@link AlltoallExecutor}).
 */
final class AlltoallSplits {
    /** Splits named in full up to this many; a longer list (a large job's) is cut, or one message would fill pages. */
    static final int SHOWN = 16;

    private AlltoallSplits() {
    }

    /** Null if {@code splits} fit a tensor of {@code rows} rows in a set of {@code size} ranks, else what is wrong. */
    static String problem(long[] splits, long rows, int size) {
        if (splits == null || splits.length != size) {
            return "gave " + (splits == null ? "no" : splits.length) + " splits for " + size + " ranks";
        }
        long sum = 0;
        for (int p = 0; p < splits.length; p++) {
            long v = splits[p];
            if (v < 0) {
                return "gave a negative split " + show(splits)
                        + (splits.length > SHOWN ? " (" + v + " for set rank " + p + ")" : "");
            }
            if (v > Long.MAX_VALUE - sum) {
                // Wrapped, the sum could match the rows and the alltoall run with splits no tensor has.
                return "gave splits " + show(splits) + " summing to more than " + Long.MAX_VALUE + " rows";
            }
            sum += v;
        }
        return sum == rows ? null : "gave splits " + show(splits) + " summing to " + sum
                + " for a first dimension of " + rows;
    }

    /** The splits as {@link Arrays#toString} writes them, the first {@link #SHOWN} only of a longer list. */
    static String show(long[] splits) {
        if (splits.length <= SHOWN) {
            return Arrays.toString(splits);
        }
        StringBuilder sb = new StringBuilder("[");
        for (int p = 0; p < SHOWN; p++) {
            sb.append(splits[p]).append(", ");
        }
        return sb.append("... ").append(splits.length - SHOWN).append(" more]").toString();
    }
}
