package io.kolo.engine;

import io.kolo.DataType;
import io.kolo.ReduceOp;

import java.io.DataInput;
import java.io.DataOutput;
import java.io.IOException;
import java.util.Arrays;

/**
 * One rank's submission of one named op, as sent to the coordinator: what the ranks must agree on, never what is
 * each rank's own (an alltoall's splits are exchanged by the op itself, {@link AlltoallExecutor}), so that a request's
 * size does not grow with the job's.
 *
 * @param unnamed the op's place among this rank's unnamed ops in its process set (1, 2, ...), 0 for a named op: the
 *                coordinator checks that the ranks' unnamed ops of one place are of one kind ({@link UnnamedOrder})
 */
record Request(int rank, String name, OpKind kind, DataType type, ReduceOp op, long[] shape,
               double prescale, double postscale, int root, String group, int groupSize,
               long unnamed) {

    void write(DataOutput out) throws IOException {
        out.writeInt(rank);
        out.writeUTF(name);
        out.writeByte(kind.ordinal());
        out.writeByte(type.ordinal());
        out.writeByte(op.ordinal());
        writeLongs(out, shape);
        out.writeDouble(prescale);
        out.writeDouble(postscale);
        out.writeInt(root);
        out.writeUTF(group == null ? "" : group);
        out.writeInt(groupSize);
        out.writeLong(unnamed);
    }

    static Request read(DataInput in) throws IOException {
        int rank = in.readInt();
        String name = in.readUTF();
        OpKind kind = OpKind.values()[in.readByte()];
        DataType type = DataType.values()[in.readByte()];
        ReduceOp op = ReduceOp.values()[in.readByte()];
        long[] shape = readLongs(in);
        double pre = in.readDouble();
        double post = in.readDouble();
        int root = in.readInt();
        String group = in.readUTF();
        int groupSize = in.readInt();
        long unnamed = in.readLong();
        return new Request(rank, name, kind, type, op, shape, pre, post, root,
                group.isEmpty() ? null : group, groupSize, unnamed);
    }

    /** What was submitted, for a mismatch message; {@code members} maps a broadcast's root back to the job's rank. */
    String describe(int[] members) {
        StringBuilder sb = new StringBuilder();
        sb.append(type).append(Arrays.toString(shape));
        switch (kind) {
            case ALLREDUCE, REDUCESCATTER -> {
                sb.append(' ').append(op);
                if (prescale != 1.0) {
                    sb.append(" prescale=").append(prescale);
                }
                if (postscale != 1.0) {
                    sb.append(" postscale=").append(postscale);
                }
            }
            // The root travels as a set rank; the caller gave, and messages name, the job's.
            case BROADCAST -> sb.append(" root=").append(root >= 0 && root < members.length ? members[root] : root);
            default -> { }
        }
        if (group != null) {
            sb.append(" as 1 of a group of ").append(groupSize);
        }
        return sb.toString();
    }

    long rowElements() {
        long n = 1;
        for (int i = 1; i < shape.length; i++) {
            n *= shape[i];
        }
        return n;
    }

    long elements() {
        return Shapes.elements(shape);
    }

    static void writeLongs(DataOutput out, long[] values) throws IOException {
        if (values == null) {
            out.writeInt(-1);
            return;
        }
        out.writeInt(values.length);
        for (long v : values) {
            out.writeLong(v);
        }
    }

    static long[] readLongs(DataInput in) throws IOException {
        int n = in.readInt();
        if (n < 0) {
            return null;
        }
        long[] values = new long[n];
        for (int i = 0; i < n; i++) {
            values[i] = in.readLong();
        }
        return values;
    }
}
