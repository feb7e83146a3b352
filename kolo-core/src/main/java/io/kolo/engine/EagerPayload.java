package io.kolo.engine;

import io.kolo.DataType;
import io.kolo.collective.Reduction;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * How the cycle's eager op rides with the vote, by kind (see {@link CycleVote}). An allreduce's payload is reduced
 * with the op's own reduction. A broadcast or an allgather needs no arithmetic: every rank writes its bytes where they
 * belong in a payload of zeros (the root its tensor; every rank its rows at their offset in the gathered result),
 * and an OR of the payloads as 64-bit words, exact whatever the bytes, leaves every rank the whole result.
 */
final class EagerPayload {
    /**
     * The most bytes of a broadcast's or allgather's result that ride with the vote, whatever
     * {@code KOLO_EAGER_ALLREDUCE_BYTES} allows: the whole result travels from and to every rank, where the collective
     * after the vote moves less, and the vote of every later cycle carries the payload until another op takes its
     * place, which slowed the next larger sizes ({@code kolo bench broadcast -np 2 --sizes 64B,256B,512B,1KiB,4KiB} and the
     * same for allgather, rebuilt with 1 KiB, 512 B and 256 B; docs/performance.md, "Measured constants").
     */
    static final long ORED_MAX_BYTES = 256;

    private EagerPayload() {
    }

    /** Whether {@code r} may ride with the vote, given the vote's room for a payload. */
    static boolean fits(Response r, long maxBytes) {
        long limit = r.kind() == OpKind.ALLREDUCE ? maxBytes : Math.min(maxBytes, ORED_MAX_BYTES);
        return eligible(r) && bytes(r) <= limit;
    }

    /** Whether an op of this kind may ride with the vote at all. */
    private static boolean eligible(Response r) {
        return switch (r.kind()) {
            // Adasum combines whole vectors: it cannot ride with the negotiation's element-wise exchange.
            case ALLREDUCE -> r.op() != io.kolo.ReduceOp.ADASUM;
            case BROADCAST, ALLGATHER -> true;
            case ALLTOALL, REDUCESCATTER, BARRIER, JOIN -> false;
        };
    }

    /** The bytes {@code r} takes behind the vote's bits (an OR of 64-bit words takes whole words). */
    static long bytes(Response r) {
        return switch (r.kind()) {
            case ALLREDUCE -> r.totalBytes();
            case ALLGATHER -> wholeWords(gatheredBytes(r));
            default -> wholeWords(r.totalBytes());
        };
    }

    /**
     * Writes this rank's contribution at {@code at} of {@code vote}: its tensor {@code data} (prescaled) for an
     * allreduce; for a broadcast or allgather, zeros with its own bytes in their place.
     */
    static void place(Response r, int rank, MemorySegment data, MemorySegment vote, long at) {
        if (r.kind() == OpKind.ALLREDUCE) {
            MemorySegment.copy(data, 0, vote, at, r.totalBytes());
            Reductions.prescale(vote, at, r.totalElements(), r);
            return;
        }
        // Word by word: a slice to fill would be an object per op.
        for (long w = at, end = at + bytes(r); w < end; w += 8) {
            vote.set(ValueLayout.JAVA_LONG, w, 0L);
        }
        if (r.kind() == OpKind.BROADCAST) {
            if (rank == r.root()) {
                MemorySegment.copy(data, 0, vote, at, r.totalBytes());
            }
        } else {
            long rowBytes = rowBytes(r);
            long mineAt = 0;
            for (int p = 0; p < rank; p++) {
                mineAt += r.perRank()[p][0] * rowBytes;
            }
            MemorySegment.copy(data, 0, vote, at + mineAt, r.perRank()[rank][0] * rowBytes);
        }
    }

    /** The payload's element count, type and reduction in the vote's exchange. */
    static long count(Response r) {
        return r.kind() == OpKind.ALLREDUCE ? r.totalElements() : bytes(r) / 8;
    }

    static DataType type(Response r) {
        return r.kind() == OpKind.ALLREDUCE ? r.type() : DataType.INT64;
    }

    static Reduction reduction(Response r) {
        return r.kind() == OpKind.ALLREDUCE ? Reductions.of(r.op()) : Reduction.BOR;
    }

    /**
     * After an exchange in which every rank's payload was real: writes the result at {@code at} of {@code vote} to
     * {@code out}, memory that holds exactly the result (the tensor itself, or an allgather's output).
     */
    static void deliver(Response r, MemorySegment out, MemorySegment vote, long at, int rank, int size) {
        switch (r.kind()) {
            case ALLREDUCE -> {
                Reductions.finish(vote, at, r.totalElements(), r, size);
                MemorySegment.copy(vote, at, out, 0, r.totalBytes());
            }
            case BROADCAST -> {
                if (rank != r.root()) {
                    MemorySegment.copy(vote, at, out, 0, r.totalBytes());
                }
            }
            default -> MemorySegment.copy(vote, at, out, 0, gatheredBytes(r));
        }
    }

    /**
     * {@link #deliver} for a submitted op: an allgather's result goes to the op's own output memory when it fits,
     * else to memory its {@link Op#outputs} allocate. Returns false when the op failed here instead (a result this
     * rank could not hold: it is failed, and out of the pending ops).
     */
    static boolean deliver(Response r, Op op, MemorySegment vote, long at, Execution x) {
        if (r.kind() != OpKind.ALLGATHER) {
            deliver(r, op.input, vote, at, x.rank(), x.size());
            return true;
        }
        long[] shape = Shapes.withFirstDim(op.shape, gatheredRows(r));
        String misfit = op.into == null ? null : op.intoCheck.problem(shape);
        if (misfit != null) {
            x.outcomes().failResult(op, shape, misfit);
            return false;
        }
        if (op.into == null) {
            return x.outcomes().deliver(op, shape, vote, at, gatheredBytes(r));
        }
        deliver(r, op.into, vote, at, x.rank(), x.size());
        op.setResult(shape, op.into);
        return true;
    }

    private static long rowBytes(Response r) {
        return Shapes.rowElements(r.shapes()[0]) * r.type().byteSize();
    }

    /** An allgather's result: every rank's rows. */
    private static long gatheredRows(Response r) {
        long rows = 0;
        for (long[] p : r.perRank()) {
            rows += p[0];
        }
        return rows;
    }

    static long gatheredBytes(Response r) {
        return gatheredRows(r) * rowBytes(r);
    }

    private static long wholeWords(long bytes) {
        return (bytes + 7) & ~7L;
    }
}
