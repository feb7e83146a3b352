package io.kolo;

import java.util.Arrays;

/**
 * One collective in the engine fuzzer's program, as every rank derives it from the seed. Per-rank parts (allgather's
 * rows, alltoall's splits) are arrays indexed by rank, so each rank knows what every other rank submits.
 *
 * @param id       unique over the whole program: seeds the op's input values
 * @param name     null for an unnamed op (every rank submits those in program order)
 * @param shape    the common shape; allgather's first dimension is {@code rows[rank]} instead
 * @param rows     allgather: each rank's first dimension
 * @param splits   alltoall: {@code splits[r][p]} rows rank r sends to rank p
 * @param members  grouped allreduce: each member's element count (all share {@code type})
 * @param odd      a rank that submits a different request ({@link #mismatch}), or -1
 */
record FuzzOp(Kind kind, long id, String name, DataType type, ReduceOp op, double prescale, double postscale,
              int root, long[] shape, long[] rows, long[][] splits, long[] members, FuzzValues.Memory memory,
              int odd, Mismatch mismatch) {

    enum Kind { ALLREDUCE, GROUPED, ALLGATHER, BROADCAST, ALLTOALL, REDUCESCATTER, BARRIER }

    /** What the odd rank changes in its request; every rank must then see the op fail. */
    enum Mismatch { TYPE, SHAPE, OP, ROOT, PRESCALE }

    boolean mismatched() {
        return odd >= 0;
    }

    /** The shape {@code rank} submits. */
    long[] shapeOf(int rank) {
        long[] s = shape.clone();
        if (kind == Kind.ALLGATHER) {
            s[0] = rows[rank];
        } else if (kind == Kind.ALLTOALL) {
            s[0] = Arrays.stream(splits[rank]).sum();
        }
        if (rank == odd && mismatch == Mismatch.SHAPE) {
            s[s.length - 1] += 1;
        }
        return s;
    }

    DataType typeOf(int rank) {
        if (rank != odd || mismatch != Mismatch.TYPE) {
            return type;
        }
        return type == DataType.FLOAT32 ? DataType.FLOAT64 : DataType.FLOAT32;
    }

    ReduceOp opOf(int rank) {
        if (rank != odd || mismatch != Mismatch.OP) {
            return op;
        }
        return op == ReduceOp.MAX ? ReduceOp.MIN : ReduceOp.MAX;
    }

    double prescaleOf(int rank) {
        return rank == odd && mismatch == Mismatch.PRESCALE ? prescale * 2 : prescale;
    }

    int rootOf(int rank, int size) {
        return rank == odd && mismatch == Mismatch.ROOT ? (root + 1) % size : root;
    }

    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder(kind.name().toLowerCase()).append('#').append(id).append(' ')
                .append(name == null ? "(unnamed)" : "'" + name + "'").append(' ').append(type)
                .append(Arrays.toString(shape));
        switch (kind) {
            case ALLREDUCE, REDUCESCATTER -> sb.append(' ').append(op).append(" pre=").append(prescale)
                    .append(" post=").append(postscale);
            case GROUPED -> sb.append(' ').append(op).append(" members=").append(Arrays.toString(members));
            case BROADCAST -> sb.append(" root=").append(root);
            case ALLGATHER -> sb.append(" rows=").append(Arrays.toString(rows));
            case ALLTOALL -> sb.append(" splits=").append(Arrays.deepToString(splits));
            default -> { }
        }
        sb.append(' ').append(memory);
        if (mismatched()) {
            sb.append(" [rank ").append(odd).append(" submits another ").append(mismatch).append(']');
        }
        return sb.toString();
    }
}
