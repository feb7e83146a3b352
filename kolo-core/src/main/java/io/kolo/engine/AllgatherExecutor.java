package io.kolo.engine;

import java.lang.foreign.MemorySegment;

/**
 * Allgather of blocks whose first dimension may differ per rank (the response carries every rank's rows). An op with
 * output memory of its own ({@link Op#into}) that fits the result is gathered straight into it; otherwise the blocks
 * meet in the fusion buffer and the result is copied out of it.
 */
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
        long[] shape = op == null ? null : Shapes.withFirstDim(op.shape, rows);
        String misfit = op == null || op.into == null ? null : op.intoCheck.problem(shape);
        boolean direct = op != null && op.into != null && misfit == null;
        long t0 = x.trace().clock();
        MemorySegment buf = direct ? op.into : x.fusion().get(total);
        if (op != null && blockBytes[rank] > 0) {
            MemorySegment.copy(op.input, 0, buf, mineAt, blockBytes[rank]);
        }
        long t1 = x.trace().clock();
        x.ops().allgatherv(buf, blockBytes);
        long t2 = x.trace().clock();
        if (direct) {
            op.setResult(shape, op.into);
        } else if (misfit != null) {
            x.outcomes().failResult(op, shape, misfit);
        } else if (op != null) {
            x.outcomes().deliver(op, shape, buf, 0, total);
        }
        x.done(r, negotiated, t0, t1, t2, false);
    }
}
