package io.kolo;

/**
 * The collectives on Java arrays, for code that holds its data in them: each wraps the array as a {@link Tensor}
 * (no copy) and runs the tensor collective. Reductions and broadcasts work in place and return the same array;
 * allgather returns a new one.
 *
 * <pre>{@code
 * float[] grads = ...;
 * comm.allreduce(grads, ReduceOp.AVERAGE);          // every rank now holds the average
 * long[] all = comm.allgather(new long[] {myCount}); // one value per rank, in rank order
 * }</pre>
 */
public interface ArrayCollectives {
    /** In place. */
    Tensor allreduce(Tensor tensor, ReduceOp op);

    /** In place, sent and reduced as 16-bit floats where {@code compression} says so. */
    Tensor allreduce(Tensor tensor, ReduceOp op, Compression compression);

    /** Every rank's tensor, concatenated along the first dimension in rank order. */
    Tensor allgather(Tensor tensor);

    /** In place: {@code root}'s tensor is copied into every rank's tensor. */
    Tensor broadcast(Tensor tensor, int root);

    default float[] allreduce(float[] data, ReduceOp op) {
        allreduce(Tensor.of(data), op);
        return data;
    }

    default double[] allreduce(double[] data, ReduceOp op) {
        allreduce(Tensor.of(data), op);
        return data;
    }

    /** In place, sent and reduced as 16-bit floats (see {@link Compression}). */
    default float[] allreduce(float[] data, ReduceOp op, Compression compression) {
        allreduce(Tensor.of(data), op, compression);
        return data;
    }

    /** In place, sent and reduced as 16-bit floats (see {@link Compression}). */
    default double[] allreduce(double[] data, ReduceOp op, Compression compression) {
        allreduce(Tensor.of(data), op, compression);
        return data;
    }

    default int[] allreduce(int[] data, ReduceOp op) {
        allreduce(Tensor.of(data), op);
        return data;
    }

    default long[] allreduce(long[] data, ReduceOp op) {
        allreduce(Tensor.of(data), op);
        return data;
    }

    default float[] allgather(float[] data) {
        return allgather(Tensor.of(data)).floats();
    }

    default double[] allgather(double[] data) {
        return allgather(Tensor.of(data)).doubles();
    }

    default int[] allgather(int[] data) {
        return allgather(Tensor.of(data)).ints();
    }

    default long[] allgather(long[] data) {
        return allgather(Tensor.of(data)).longs();
    }

    default float[] broadcast(float[] data, int root) {
        broadcast(Tensor.of(data), root);
        return data;
    }

    default double[] broadcast(double[] data, int root) {
        broadcast(Tensor.of(data), root);
        return data;
    }

    default int[] broadcast(int[] data, int root) {
        broadcast(Tensor.of(data), root);
        return data;
    }

    default long[] broadcast(long[] data, int root) {
        broadcast(Tensor.of(data), root);
        return data;
    }
}
