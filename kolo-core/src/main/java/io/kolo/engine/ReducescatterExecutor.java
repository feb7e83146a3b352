package io.kolo.engine;

import java.lang.foreign.MemorySegment;

/** Reducescatter by rows: rank p keeps rows/size rows (the first rows % size ranks one more), reduced. */
final class ReducescatterExecutor implements OpExecutor {
    private final Execution x;

    ReducescatterExecutor(Execution x) {
        this.x = x;
    }

    @Override
    public void execute(Response r, long negotiated) {
        int rank = x.rank();
        int size = x.size();
        Op op = x.pending().get(r.names().getFirst());
        long[] shape = r.shapes()[0];
        long rows = shape[0];
        long rowElems = Shapes.rowElements(shape);
        int es = r.type().byteSize();
        long[] counts = new long[size];
        long mineAt = 0;
        for (int p = 0; p < size; p++) {
            long blockRows = rows / size + (p < rows % size ? 1 : 0);
            counts[p] = blockRows * rowElems;
            if (p < rank) {
                mineAt += counts[p];
            }
        }
        long total = Shapes.elements(shape);
        long t0 = x.trace().clock();
        MemorySegment buf = x.fusion().get(total * es);
        MemorySegment.copy(op.input, 0, buf, 0, total * es);
        long t1 = x.trace().clock();
        Reductions.prescale(buf, 0, total, r);
        x.ops().reducescatter(buf, counts, r.type(), Reductions.of(r.op()));
        Reductions.finish(buf, mineAt * es, counts[rank], r, size);
        long t2 = x.trace().clock();
        long[] outShape = Shapes.withFirstDim(shape, counts[rank] / Math.max(1, rowElems));
        if (rowElems == 0) {
            outShape[0] = rows / size + (rank < rows % size ? 1 : 0);
        }
        x.outcomes().deliver(op, outShape, buf, mineAt * es, counts[rank] * es);
        x.done(r, negotiated, t0, t1, t2, false);
    }
}
