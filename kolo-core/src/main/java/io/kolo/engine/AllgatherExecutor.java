package io.kolo.engine;

import java.lang.foreign.MemorySegment;

/** Allgather of blocks whose first dimension may differ per rank (the response carries every rank's rows). */
final class AllgatherExecutor implements OpExecutor {
    private final Execution x;

    AllgatherExecutor(Execution x) {
        this.x = x;
    }

    @Override
    public void execute(Response r, long negotiated) {
        int rank = x.rank();
        Op op = x.pending().get(r.names().getFirst());
        long rowBytes = Shapes.rowElements(r.shapes()[0]) * r.type().byteSize();
        long[] blockBytes = new long[x.size()];
        long total = 0;
        long mineAt = 0;
        long rows = 0;
        for (int p = 0; p < blockBytes.length; p++) {
            if (p == rank) {
                mineAt = total;
            }
            blockBytes[p] = r.perRank()[p][0] * rowBytes;
            total += blockBytes[p];
            rows += r.perRank()[p][0];
        }
        long t0 = x.trace().clock();
        MemorySegment buf = x.fusion().get(total);
        if (op != null && blockBytes[rank] > 0) {
            MemorySegment.copy(op.input, 0, buf, mineAt, blockBytes[rank]);
        }
        long t1 = x.trace().clock();
        x.ops().allgatherv(buf, blockBytes);
        long t2 = x.trace().clock();
        if (op != null) {
            x.outcomes().deliver(op, Shapes.withFirstDim(op.shape, rows), buf, 0, total);
        }
        x.done(r, negotiated, t0, t1, t2, false);
    }
}
