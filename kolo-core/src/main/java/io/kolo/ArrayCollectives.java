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

    /**
     * Every rank's tensor, concatenated along the first dimension in rank order, written into {@code output}, which
     * the caller keeps and reuses (PyTorch's {@code all_gather_into_tensor}): no memory is allocated per call.
     * {@code output} must be of the same type and hold exactly the gathered elements (its own shape is kept, so a
     * flat output is fine); where it does not, the collective still runs on this rank and then fails here, naming
     * the size it needed.
     *
     * <pre>{@code
     * Tensor all = Tensor.of(arena.allocate(4L * comm.size() * rows * cols), DataType.FLOAT32, comm.size() * rows, cols);
     * comm.allgatherInto(mine, all); // every step, into the same memory
     * }</pre>
     *
     * @return {@code output}
     */
    Tensor allgatherInto(Tensor tensor, Tensor output);

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

    /** Every rank's array, concatenated in rank order, into {@code output} (see {@link #allgatherInto(Tensor, Tensor)}). */
    default float[] allgatherInto(float[] data, float[] output) {
        allgatherInto(Tensor.of(data), Tensor.of(output));
        return output;
    }

    default double[] allgatherInto(double[] data, double[] output) {
        allgatherInto(Tensor.of(data), Tensor.of(output));
        return output;
    }

    default int[] allgatherInto(int[] data, int[] output) {
        allgatherInto(Tensor.of(data), Tensor.of(output));
        return output;
    }

    default long[] allgatherInto(long[] data, long[] output) {
        allgatherInto(Tensor.of(data), Tensor.of(output));
        return output;
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
