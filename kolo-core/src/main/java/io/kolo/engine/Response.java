package io.kolo.engine;

import io.kolo.DataType;
import io.kolo.ReduceOp;

import java.io.DataInput;
import java.io.DataOutput;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * What every rank executes, in the same order: one collective over one or more (fused) named tensors,
 * or an error for those names. Built by the coordinator (or replayed from the response cache) and
 * identical on every rank.
 *
 * @param names    the ops it covers, in buffer order
 * @param shapes   one shape per name (allgather/alltoall: this is the coordinator's view, rank-independent dims)
 * @param perRank  allgather: {@code perRank[r][0]} = rank r's first dimension; null for every other kind (an
 *                 alltoall's splits are each rank's own, exchanged by the op itself)
 * @param joined   ranks that had joined when this was decided (they contribute zeros / no rows)
 * @param error    non-null: every named op fails with this message
 * @param lastJoined JOIN only: the last rank to join
 * @param totalElements elements over all shapes, derived from them once: the eager path asks several times per op
 */
record Response(OpKind kind, List<String> names, DataType type, ReduceOp op, double prescale, double postscale,
                int root, long[][] shapes, long[][] perRank, int[] joined, String error, int lastJoined,
                long totalElements) {

    Response(OpKind kind, List<String> names, DataType type, ReduceOp op, double prescale, double postscale,
             int root, long[][] shapes, long[][] perRank, int[] joined, String error, int lastJoined) {
        this(kind, names, type, op, prescale, postscale, root, shapes, perRank, joined, error, lastJoined,
                sum(shapes));
    }

    static Response error(OpKind kind, List<String> names, String message) {
        return new Response(kind, names, DataType.INT8, ReduceOp.SUM, 1, 1, 0, new long[names.size()][0], null,
                new int[0], message, -1);
    }

    static Response join(int lastJoined) {
        return new Response(OpKind.JOIN, List.of(), DataType.INT8, ReduceOp.SUM, 1, 1, 0, new long[0][], null,
                new int[0], null, lastJoined);
    }

    boolean isError() {
        return error != null;
    }

    private static long sum(long[][] shapes) {
        long n = 0;
        for (long[] s : shapes) {
            n += Shapes.elements(s);
        }
        return n;
    }

    long totalBytes() {
        return totalElements() * type.byteSize();
    }

    /** Can this single-name response be fused with {@code other} (both single or fused allreduces)? */
    boolean fusableWith(Response other) {
        return kind == OpKind.ALLREDUCE && other.kind == OpKind.ALLREDUCE && !isError() && !other.isError()
                && type == other.type && op == other.op && prescale == other.prescale
                && postscale == other.postscale && Arrays.equals(joined, other.joined);
    }

    Response fuse(Response other) {
        List<String> n = new ArrayList<>(names);
        n.addAll(other.names);
        long[][] s = Arrays.copyOf(shapes, shapes.length + other.shapes.length);
        System.arraycopy(other.shapes, 0, s, shapes.length, other.shapes.length);
        return new Response(kind, List.copyOf(n), type, op, prescale, postscale, root, s, perRank, joined, error,
                lastJoined);
    }

    /**
     * Would this rank's new submission be answered exactly by this cached response? Compares the op's own fields, so
     * that an op answered from the cache never needs its {@link Request} (made only for the coordinator). An allgather
     * answer also holds the other ranks' rows: {@code rank} (in the set) checks its own, and every rank checking its own
     * (the cycle's vote ANDs the checks) covers the whole answer, as in Horovod. An alltoall answer holds no splits, so
     * one whose splits change from call to call still runs from the cache.
     */
    boolean answers(Op o, int rank) {
        if (kind != o.kind || type != o.type || o.group != null) {
            return false;
        }
        return switch (kind) {
            case ALLGATHER -> answersAllgather(o.type, o.shape, rank);
            case ALLTOALL -> sameRowShape(o.shape);
            default -> sameRequest(o.reduceOp, o.shape, o.prescale, o.postscale, o.root);
        };
    }

    /** The fields a reduction's or broadcast's request must repeat for this answer to hold. */
    private boolean sameRequest(ReduceOp reduceOp, long[] shape, double pre, double post, int rootRank) {
        return op == reduceOp && Arrays.equals(shapes[0], shape) && prescale == pre && postscale == post
                && root == rootRank;
    }

    /** All dimensions but the first (a row's), which allgather and alltoall agree on across ranks. */
    private boolean sameRowShape(long[] shape) {
        long[] agreed = shapes[0];
        return shape.length == agreed.length && shape.length > 0
                && Arrays.equals(shape, 1, shape.length, agreed, 1, agreed.length);
    }

    /** {@link #answers} for an allreduce that has no {@link Op} (see {@link Engine#allreduceNow}). */
    boolean answersAllreduce(DataType t, ReduceOp reduceOp, long[] shape, double pre, double post) {
        return kind == OpKind.ALLREDUCE && type == t && sameRequest(reduceOp, shape, pre, post, 0);
    }

    /** {@link #answers} for a broadcast that has no {@link Op} (an op's reduction fields keep their defaults). */
    boolean answersBroadcast(DataType t, long[] shape, int rootRank) {
        return kind == OpKind.BROADCAST && type == t && sameRequest(ReduceOp.SUM, shape, 1.0, 1.0, rootRank);
    }

    /** {@link #answers} for an allgather that has no {@link Op}, checked at set rank {@code rank}'s rows. */
    boolean answersAllgather(DataType t, long[] shape, int rank) {
        return kind == OpKind.ALLGATHER && type == t && sameRowShape(shape) && perRank[rank][0] == shape[0];
    }

    void write(DataOutput out) throws IOException {
        out.writeByte(kind.ordinal());
        out.writeInt(names.size());
        for (String n : names) {
            out.writeUTF(n);
        }
        out.writeByte(type.ordinal());
        out.writeByte(op.ordinal());
        out.writeDouble(prescale);
        out.writeDouble(postscale);
        out.writeInt(root);
        for (long[] s : shapes) {
            Request.writeLongs(out, s);
        }
        if (perRank == null) {
            out.writeInt(-1);
        } else {
            out.writeInt(perRank.length);
            for (long[] p : perRank) {
                Request.writeLongs(out, p);
            }
        }
        out.writeInt(joined.length);
        for (int j : joined) {
            out.writeInt(j);
        }
        out.writeBoolean(error != null);
        if (error != null) {
            out.writeUTF(error.length() > 16000 ? error.substring(0, 16000) + "..." : error);
        }
        out.writeInt(lastJoined);
    }

    static Response read(DataInput in) throws IOException {
        OpKind kind = OpKind.values()[in.readByte()];
        int n = in.readInt();
        List<String> names = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            names.add(in.readUTF());
        }
        DataType type = DataType.values()[in.readByte()];
        ReduceOp op = ReduceOp.values()[in.readByte()];
        double pre = in.readDouble();
        double post = in.readDouble();
        int root = in.readInt();
        long[][] shapes = new long[n][];
        for (int i = 0; i < n; i++) {
            shapes[i] = Request.readLongs(in);
        }
        int pr = in.readInt();
        long[][] perRank = null;
        if (pr >= 0) {
            perRank = new long[pr][];
            for (int i = 0; i < pr; i++) {
                perRank[i] = Request.readLongs(in);
            }
        }
        int[] joined = new int[in.readInt()];
        for (int i = 0; i < joined.length; i++) {
            joined[i] = in.readInt();
        }
        String error = in.readBoolean() ? in.readUTF() : null;
        int last = in.readInt();
        return new Response(kind, List.copyOf(names), type, op, pre, post, root, shapes, perRank, joined, error, last);
    }

    /** The response for tensor {@code i} alone (what the cache keeps for each name of a fused response). */
    Response part(int i) {
        if (names().size() == 1) {
            return this;
        }
        return new Response(kind(), List.of(names().get(i)), type(), op(), prescale(), postscale(), root(),
                new long[][]{shapes()[i]}, perRank(), joined(), null, -1);
    }
}
