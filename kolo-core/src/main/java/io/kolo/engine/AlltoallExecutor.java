package io.kolo.engine;

import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * Alltoall with per-destination splits. The negotiation agreed on the op alone (name, type, a row's shape): each rank's
 * splits are its own, and the op itself tells every peer how many rows it sends it, by an alltoall of one count per
 * peer before the rows, as Horovod's does. A rank whose splits are bad sends every peer {@link #BAD_SPLITS} instead,
 * so that every rank learns the same set of bad ranks from the same exchange and fails the op alike, with the first
 * bad rank's own account of what was wrong (broadcast from it, on this error path only).
 */
final class AlltoallExecutor implements OpExecutor {
    /** Sent in place of every count by a rank whose splits are bad: no count is negative. */
    private static final long BAD_SPLITS = -1;

    private final Execution x;
    /** Rows this rank sends each peer, and rows each peer sends it: reused, so the exchange allocates nothing. */
    private final long[] sendCounts;
    private final long[] recvCounts;
    private final MemorySegment sendCountsMemory;
    private final MemorySegment recvCountsMemory;
    /** One count's bytes per peer, both ways. */
    private final long[] countBytes;
    private final long[] sendBytes;
    private final long[] recvBytes;

    AlltoallExecutor(Execution x) {
        this.x = x;
        int size = x.size();
        sendCounts = new long[size];
        recvCounts = new long[size];
        sendCountsMemory = MemorySegment.ofArray(sendCounts);
        recvCountsMemory = MemorySegment.ofArray(recvCounts);
        countBytes = new long[size];
        Arrays.fill(countBytes, Long.BYTES);
        sendBytes = new long[size];
        recvBytes = new long[size];
    }

    @Override
    public void execute(Response r, long negotiated) {
        int size = x.size();
        Op op = x.pending().get(r.names().getFirst());
        long rowBytes = Shapes.rowElements(r.shapes()[0]) * r.type().byteSize();
        String problem = AlltoallSplits.problem(op.splits, Shapes.firstDim(op.shape), size);
        long t0 = x.trace().clock();
        MemorySegment send = op.input;
        if (problem == null) {
            System.arraycopy(op.splits, 0, sendCounts, 0, size);
            if (!op.input.isNative()) {
                long sendTotal = Shapes.firstDim(op.shape) * rowBytes;
                send = x.scratch().get(sendTotal);
                MemorySegment.copy(op.input, 0, send, 0, sendTotal);
            }
        } else {
            Arrays.fill(sendCounts, BAD_SPLITS);
        }
        long t1 = x.trace().clock();
        x.ops().alltoallv(sendCountsMemory, countBytes, recvCountsMemory, countBytes);
        int bad = firstBad();
        if (bad >= 0) {
            fail(op, bad, problem);
            return;
        }
        long rows = 0;
        for (int p = 0; p < size; p++) {
            sendBytes[p] = sendCounts[p] * rowBytes;
            recvBytes[p] = recvCounts[p] * rowBytes;
            rows += recvCounts[p];
        }
        MemorySegment recv = x.fusion().get(rows * rowBytes);
        x.ops().alltoallv(send, sendBytes, recv, recvBytes);
        long t2 = x.trace().clock();
        if (x.outcomes().deliver(op, Shapes.withFirstDim(op.shape, rows), recv, 0, rows * rowBytes)) {
            op.setReceivedSplits(recvCounts.clone());
        }
        x.done(r, negotiated, t0, t1, t2, false);
    }

    /** The lowest rank that sent {@link #BAD_SPLITS}, or -1: the same on every rank, all having the same counts. */
    private int firstBad() {
        for (int p = 0; p < recvCounts.length; p++) {
            if (recvCounts[p] < 0) {
                return p;
            }
        }
        return -1;
    }

    /** Fails {@code op} on this rank as on every other: with what the first bad rank, {@code bad}, found wrong. */
    private void fail(Op op, int bad, String problem) {
        boolean mine = bad == x.rank();
        byte[] told = x.ops().broadcast(mine ? problem.getBytes(StandardCharsets.UTF_8) : new byte[0], bad);
        String message = "alltoall '" + op.name + "'" + x.where() + ": rank " + x.members()[bad] + " "
                + new String(told, StandardCharsets.UTF_8);
        x.outcomes().failPending(op.name, message, o -> x.trace().failed(o, message));
    }
}
