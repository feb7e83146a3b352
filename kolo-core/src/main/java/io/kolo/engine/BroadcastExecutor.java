package io.kolo.engine;

import java.lang.foreign.MemorySegment;

/** Broadcast from the response's root, in the tensor's own memory when it is the right size. */
final class BroadcastExecutor implements OpExecutor {
    private final Execution x;

    BroadcastExecutor(Execution x) {
        this.x = x;
    }

    @Override
    public void execute(Response r, long negotiated) {
        Op op = x.pending().get(r.names().getFirst());
        long bytes = Shapes.elements(r.shapes()[0]) * r.type().byteSize();
        boolean direct = op != null && op.input.byteSize() == bytes;
        boolean root = x.rank() == r.root();
        long t0 = x.trace().clock();
        MemorySegment buf = direct ? op.input : x.fusion().get(bytes);
        if (!direct && op != null && root) {
            MemorySegment.copy(op.input, 0, buf, 0, bytes);
        }
        long t1 = x.trace().clock();
        x.ops().broadcast(buf, bytes, r.root());
        long t2 = x.trace().clock();
        if (!direct && op != null && !root) {
            MemorySegment.copy(buf, 0, op.input, 0, bytes);
        }
        x.done(r, negotiated, t0, t1, t2, direct);
    }
}
