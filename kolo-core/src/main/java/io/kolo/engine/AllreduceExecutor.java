package io.kolo.engine;

import java.lang.foreign.MemorySegment;

/**
 * Allreduce of one response, possibly several fused tensors: small tensors travel together through the fusion
 * buffer, large ones (and a tensor alone) are reduced where they lie.
 */
final class AllreduceExecutor implements OpExecutor {
    /**
     * Tensors this large in a fused response are reduced where they lie, each with a collective call of its own. On
     * CPUs the copy into the fusion buffer and back runs at memory speed, like the transfer itself, while an extra
     * call costs microseconds over shared memory and a ring's latency over TCP, both small beside copying 2 MiB (docs/performance.md,
     * "Measured constants").
     */
    static final long IN_PLACE_MIN_BYTES = 1L << 20;

    private final Execution x;

    AllreduceExecutor(Execution x) {
        this.x = x;
    }

    @Override
    public void execute(Response r, long negotiated) {
        if (r.op() == io.kolo.ReduceOp.ADASUM) {
            adasum(r, negotiated);
            return;
        }
        int es = r.type().byteSize();
        int n = r.names().size();
        // Which tensors go through the fusion buffer follows from the response alone, so every rank makes the same
        // collective calls in the same order (a joined rank, with no tensors, too).
        long packed = 0;
        for (int i = 0; i < n; i++) {
            long bytes = Shapes.elements(r.shapes()[i]) * es;
            packed += inPlace(n, bytes) ? 0 : bytes;
        }
        long t0 = x.trace().clock();
        MemorySegment buf = packed > 0 ? x.fusion().get(packed) : null;
        if (buf != null) {
            copyPacked(r, buf, true);
        }
        long t1 = x.trace().clock();
        if (buf != null) {
            Reductions.allreduce(x.ops(), buf, packed / es, r);
        }
        for (int i = 0; i < n; i++) {
            long bytes = Shapes.elements(r.shapes()[i]) * es;
            if (inPlace(n, bytes)) {
                reduceWhereItLies(x.pending().get(r.names().get(i)), bytes, r);
            }
        }
        long t2 = x.trace().clock();
        if (buf != null) {
            copyPacked(r, buf, false);
        }
        x.done(r, negotiated, t0, t1, t2, buf == null);
    }

    /** Adasum of each tensor on its own (fused tensors keep their own dot products), where it lies. */
    private void adasum(Response r, long negotiated) {
        long t1 = x.trace().clock();
        int es = r.type().byteSize();
        for (int i = 0; i < r.names().size(); i++) {
            long count = Shapes.elements(r.shapes()[i]);
            Op op = x.pending().get(r.names().get(i));
            MemorySegment buf;
            if (op != null && op.input.byteSize() == count * es) {
                buf = op.input;
            } else {
                // A joined rank contributes a zero vector, which Adasum leaves out.
                buf = x.scratch().get(count * es);
                buf.asSlice(0, count * es).fill((byte) 0);
            }
            Reductions.prescale(buf, 0, count, r);
            x.ops().adasum(buf, count, r.type());
            Reductions.finish(buf, 0, count, r, x.size());
        }
        x.done(r, negotiated, t1, t1, x.trace().clock(), true);
    }

    /**
     * Copies the tensors of {@code r} that travel through the fusion buffer into {@code buf}, one after the other
     * (zeros for a rank without them, i.e. joined), or with {@code in} false back out of it.
     */
    private void copyPacked(Response r, MemorySegment buf, boolean in) {
        int es = r.type().byteSize();
        int n = r.names().size();
        long off = 0;
        for (int i = 0; i < n; i++) {
            long bytes = Shapes.elements(r.shapes()[i]) * es;
            if (inPlace(n, bytes)) {
                continue;
            }
            Op op = x.pending().get(r.names().get(i));
            if (op == null) {
                if (in) {
                    buf.asSlice(off, bytes).fill((byte) 0);
                }
            } else if (in) {
                MemorySegment.copy(op.input, 0, buf, off, bytes);
            } else {
                MemorySegment.copy(buf, off, op.input, 0, bytes);
            }
            off += bytes;
        }
    }

    /**
     * Whether a tensor of a response with {@code names} tensors is reduced where it lies rather than in the fusion
     * buffer: a tensor alone in its response, or one of at least {@link #IN_PLACE_MIN_BYTES}.
     */
    private static boolean inPlace(int names, long bytes) {
        return names == 1 || bytes >= IN_PLACE_MIN_BYTES;
    }

    /**
     * Reduces one tensor in its own memory (heap or native: every transport takes both). A rank without it (joined)
     * contributes zeros from the scratch buffer: the fusion buffer may hold the response's other tensors meanwhile.
     */
    private void reduceWhereItLies(Op op, long bytes, Response r) {
        long count = bytes / r.type().byteSize();
        if (op != null && op.input.byteSize() == bytes) {
            Reductions.allreduce(x.ops(), op.input, count, r);
            return;
        }
        MemorySegment buf = x.scratch().get(bytes);
        if (op != null) {
            MemorySegment.copy(op.input, 0, buf, 0, bytes);
        } else {
            buf.asSlice(0, bytes).fill((byte) 0);
        }
        Reductions.allreduce(x.ops(), buf, count, r);
        if (op != null) {
            MemorySegment.copy(buf, 0, op.input, 0, bytes);
        }
    }
}
