package io.kolo.engine;

import io.kolo.DataType;

import java.util.Arrays;
import java.util.Objects;

/**
 * Whether the ranks of a process set submitted the same op under one name, and what to tell them when not: one
 * message naming the tensor and what each rank submitted, with the set's ranks as the job knows them.
 */
final class Agreement {
    private final int size;
    /** The set's ranks in the job, by set rank. */
    private final int[] members;
    /** After an op's name in messages: which process set it belongs to ("" for the global set). */
    private final String where;

    Agreement(int[] members, String where) {
        this.size = members.length;
        this.members = members;
        this.where = where;
    }

    /** Null if the ranks agree, else a message naming the tensor and what each rank submitted. */
    String mismatch(Request[] byRank, Request first) {
        boolean differs = false;
        for (Request r : byRank) {
            if (r == null) {
                continue;
            }
            boolean same = r.kind() == first.kind() && r.type() == first.type()
                    && Objects.equals(r.group(), first.group()) && r.groupSize() == first.groupSize();
            switch (first.kind()) {
                case ALLREDUCE, REDUCESCATTER -> same &= r.op() == first.op() && r.prescale() == first.prescale()
                        && r.postscale() == first.postscale() && Arrays.equals(r.shape(), first.shape());
                case BROADCAST -> same &= r.root() == first.root() && Arrays.equals(r.shape(), first.shape());
                case ALLGATHER, ALLTOALL -> same &= r.shape().length == first.shape().length && r.shape().length > 0
                        && Arrays.equals(r.shape(), 1, r.shape().length, first.shape(), 1, first.shape().length);
                default -> { }
            }
            differs |= !same;
        }
        if (!differs) {
            return null;
        }
        StringBuilder sb = new StringBuilder("mismatched ").append(first.kind().label()).append(" '")
                .append(first.name()).append("'").append(where).append(": ");
        String sep = "";
        for (Request r : byRank) {
            if (r != null) {
                sb.append(sep).append("rank ").append(members[r.rank()]).append(" submitted ")
                        .append(r.kind() == first.kind() ? "" : r.kind().label() + " ").append(r.describe(members));
                sep = ", ";
            }
        }
        if (first.kind() == OpKind.ALLGATHER || first.kind() == OpKind.ALLTOALL) {
            sb.append(" (all dimensions but the first must match)");
        }
        if (first.kind() == OpKind.ALLREDUCE && mixesCompressedAndFull(byRank)) {
            sb.append(" (a compressed float tensor travels as FLOAT16/BFLOAT16 and its AVERAGE as SUM: pass the same"
                    + " Compression, or set the same KOLO_COMPRESSION, on every rank)");
        }
        return sb.toString();
    }

    private static boolean mixesCompressedAndFull(Request[] byRank) {
        boolean narrow = false;
        boolean wide = false;
        for (Request r : byRank) {
            if (r != null) {
                narrow |= r.type() == DataType.FLOAT16 || r.type() == DataType.BFLOAT16;
                wide |= r.type() == DataType.FLOAT32 || r.type() == DataType.FLOAT64;
            }
        }
        return narrow && wide;
    }
}
