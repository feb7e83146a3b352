package io.kolo.engine;

import java.lang.foreign.MemorySegment;

/** Alltoall with per-destination splits (the response carries every rank's split table). */
final class AlltoallExecutor implements OpExecutor {
    private final Execution x;

    AlltoallExecutor(Execution x) {
        this.x = x;
    }

    @Override
    public void execute(Response r, long negotiated) {
        int rank = x.rank();
        int size = x.size();
        Op op = x.pending().get(r.names().getFirst());
        long rowBytes = Shapes.rowElements(r.shapes()[0]) * r.type().byteSize();
        long[] sendBytes = new long[size];
        long[] recvBytes = new long[size];
        long[] received = new long[size];
        long sendTotal = 0;
        long recvTotal = 0;
        for (int p = 0; p < size; p++) {
            sendBytes[p] = r.perRank()[rank][p] * rowBytes;
            received[p] = r.perRank()[p][rank];
            recvBytes[p] = received[p] * rowBytes;
            sendTotal += sendBytes[p];
            recvTotal += recvBytes[p];
        }
        long t0 = x.trace().clock();
        MemorySegment send;
        if (op.input.isNative()) {
            send = op.input;
        } else {
            send = x.scratch().get(sendTotal);
            MemorySegment.copy(op.input, 0, send, 0, sendTotal);
        }
        MemorySegment recv = x.fusion().get(recvTotal);
        long t1 = x.trace().clock();
        x.ops().alltoallv(send, sendBytes, recv, recvBytes);
        long t2 = x.trace().clock();
        long rows = 0;
        for (long v : received) {
            rows += v;
        }
        if (x.outcomes().deliver(op, Shapes.withFirstDim(op.shape, rows), recv, 0, recvTotal)) {
            op.setReceivedSplits(received);
        }
        x.done(r, negotiated, t0, t1, t2, false);
    }
}
