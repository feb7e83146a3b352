package io.kolo;

import java.io.Serializable;
import java.util.List;

/**
 * The collectives of one process set, as this rank takes part in them: the {@link Communicator} itself for the set of
 * every rank, {@link Communicator#on(ProcessSet)} for a {@link ProcessSet} (Horovod's {@code process_set=} argument).
 * Only a set's members call its collectives; results in rank order (allgather, alltoall) come in the set's rank
 * order, and a broadcast's root is a job rank that belongs to the set (as in Horovod and PyTorch).
 *
 * <p>Every collective has a blocking form and an {@code Async} form that returns a {@link Handle}. Ops are matched
 * across ranks by name; an op without a name gets one from a per-kind counter, so unnamed ops must be submitted in the
 * same order on every rank (where the ranks' unnamed ops of one place differ in kind, they fail on every rank at once,
 * naming each rank's). Reductions and broadcasts work in place and return what they were given; allgather, alltoall
 * and reducescatter return new memory (except {@code allgatherInto}, which writes into the caller's output). Results
 * are bit-identical on every rank. Arrays are wrapped as a {@link Tensor} without a copy.
 *
 * <pre>{@code
 * float[] grads = ...;
 * comm.allreduce(grads, ReduceOp.AVERAGE);                   // every rank now holds the average
 * long[] counts = comm.allgather(new long[] {mySamples});    // one value per rank, in rank order
 * comm.on(trainers).allreduce(grads, ReduceOp.AVERAGE);      // among the ranks of a process set only
 * }</pre>
 */
public abstract sealed class Collectives permits Communicator, ProcessSetCollectives {

    Collectives() {
    }

    /** The set's collectives on this rank (checked on every call: a removed set's fail, saying so). */
    abstract SetCollectives ops();

    /** The set rank of the job rank {@code root}, refused when it is not a member. */
    abstract int setRank(int root);

    /** The job rank of the set rank {@code setRank}. */
    abstract int jobRank(int setRank);

    // ---- allreduce

    /** In place: {@code tensor} becomes the reduction over the set's ranks. */
    public final Tensor allreduce(Tensor tensor, ReduceOp op) {
        return ops().allreduce(tensor, op);
    }

    /**
     * In place, with float tensors sent and reduced as 16-bit floats (Horovod's {@code compression=}); see
     * {@link Compression} for the trade-off. Every rank passes the same compression.
     *
     * <pre>{@code
     * comm.allreduce(Tensor.of(gradient), ReduceOp.AVERAGE, Compression.FP16);
     * }</pre>
     */
    public final Tensor allreduce(Tensor tensor, ReduceOp op, Compression compression) {
        return ops().allreduce(tensor, op, compression);
    }

    /**
     * In place and named, as Horovod's {@code hvd.allreduce(tensor, name=...)}: the name lets the engine recognise the
     * op when it comes again. A small allreduce repeated under its name (a loss, a metric, at most
     * {@code KOLO_EAGER_ALLREDUCE_BYTES}) then runs on the calling thread within one exchange of messages, with
     * nothing allocated.
     *
     * <pre>{@code
     * float[] loss = {batchLoss};
     * comm.allreduce("loss", Tensor.of(loss), ReduceOp.AVERAGE);   // every step, the same name
     * }</pre>
     */
    public final Tensor allreduce(String name, Tensor tensor, ReduceOp op) {
        return ops().allreduce(name, tensor, op, 1.0, 1.0);
    }

    /** Named and in place, with factors applied before and after the reduction (see {@link #allreduce(String, Tensor, ReduceOp)}). */
    public final Tensor allreduce(String name, Tensor tensor, ReduceOp op, double prescale, double postscale) {
        return ops().allreduce(name, tensor, op, prescale, postscale);
    }

    /** In place, asynchronously, compressed as {@code KOLO_COMPRESSION} says. */
    public final Handle<Tensor> allreduceAsync(String name, Tensor tensor, ReduceOp op) {
        return ops().allreduceAsync(name, tensor, op);
    }

    /** In place, asynchronously, compressed (see {@link Compression}); every rank passes the same compression. */
    public final Handle<Tensor> allreduceAsync(String name, Tensor tensor, ReduceOp op, Compression compression) {
        return ops().allreduceAsync(name, tensor, op, 1.0, 1.0, compression);
    }

    /**
     * In place, asynchronously, with factors applied before ({@code prescale}) and after ({@code postscale}) the
     * reduction, as Horovod does for gradient pre-division. Compressed as {@code KOLO_COMPRESSION} says.
     */
    public final Handle<Tensor> allreduceAsync(String name, Tensor tensor, ReduceOp op, double prescale,
                                               double postscale) {
        SetCollectives s = ops();
        return s.allreduceAsync(name, tensor, op, prescale, postscale, s.defaultCompression());
    }

    /**
     * In place, asynchronously, with pre/post factors and {@code compression} (ignored for integer and 16-bit
     * tensors). Every rank passes the same compression for the same op.
     */
    public final Handle<Tensor> allreduceAsync(String name, Tensor tensor, ReduceOp op, double prescale,
                                               double postscale, Compression compression) {
        return ops().allreduceAsync(name, tensor, op, prescale, postscale, compression);
    }

    /** In place; returns {@code data}. */
    public final float[] allreduce(float[] data, ReduceOp op) {
        ops().allreduce(Tensor.of(data), op);
        return data;
    }

    /** In place; returns {@code data}. */
    public final double[] allreduce(double[] data, ReduceOp op) {
        ops().allreduce(Tensor.of(data), op);
        return data;
    }

    /** In place; returns {@code data}. */
    public final int[] allreduce(int[] data, ReduceOp op) {
        ops().allreduce(Tensor.of(data), op);
        return data;
    }

    /** In place; returns {@code data}. */
    public final long[] allreduce(long[] data, ReduceOp op) {
        ops().allreduce(Tensor.of(data), op);
        return data;
    }

    /** In place, sent and reduced as 16-bit floats (see {@link Compression}); returns {@code data}. */
    public final float[] allreduce(float[] data, ReduceOp op, Compression compression) {
        ops().allreduce(Tensor.of(data), op, compression);
        return data;
    }

    /** In place, sent and reduced as 16-bit floats (see {@link Compression}); returns {@code data}. */
    public final double[] allreduce(double[] data, ReduceOp op, Compression compression) {
        ops().allreduce(Tensor.of(data), op, compression);
        return data;
    }

    // ---- grouped allreduce

    /**
     * In place: several tensors negotiated and fused as one unit, so they complete together (Horovod's grouped
     * allreduce). Members are named {@code name.0}, {@code name.1}, ...
     */
    public final Handle<List<Tensor>> groupedAllreduceAsync(String name, List<Tensor> tensors, ReduceOp op) {
        SetCollectives s = ops();
        return s.groupedAllreduceAsync(name, tensors, op, s.defaultCompression());
    }

    /** Grouped allreduce with {@code compression} of the float members (see {@link Compression}). */
    public final Handle<List<Tensor>> groupedAllreduceAsync(String name, List<Tensor> tensors, ReduceOp op,
                                                            Compression compression) {
        return ops().groupedAllreduceAsync(name, tensors, op, compression);
    }

    /** Grouped allreduce, blocking (see {@link #groupedAllreduceAsync(String, List, ReduceOp)}). */
    public final List<Tensor> groupedAllreduce(List<Tensor> tensors, ReduceOp op) {
        return groupedAllreduceAsync(null, tensors, op).await();
    }

    /** Grouped allreduce, blocking, float members compressed (see {@link Compression}). */
    public final List<Tensor> groupedAllreduce(List<Tensor> tensors, ReduceOp op, Compression compression) {
        return groupedAllreduceAsync(null, tensors, op, compression).await();
    }

    // ---- allgather

    /** Every rank's tensor, concatenated along the first dimension in rank order (first dimensions may differ). */
    public final Tensor allgather(Tensor tensor) {
        return ops().allgather(tensor);
    }

    /** Allgather, asynchronously. */
    public final Handle<Tensor> allgatherAsync(String name, Tensor tensor) {
        return ops().allgatherAsync(name, tensor);
    }

    /** Every rank's array, concatenated in rank order. */
    public final float[] allgather(float[] data) {
        return ops().allgather(Tensor.of(data)).floats();
    }

    /** Every rank's array, concatenated in rank order. */
    public final double[] allgather(double[] data) {
        return ops().allgather(Tensor.of(data)).doubles();
    }

    /** Every rank's array, concatenated in rank order. */
    public final int[] allgather(int[] data) {
        return ops().allgather(Tensor.of(data)).ints();
    }

    /** Every rank's array, concatenated in rank order. */
    public final long[] allgather(long[] data) {
        return ops().allgather(Tensor.of(data)).longs();
    }

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
    public final Tensor allgatherInto(Tensor tensor, Tensor output) {
        return ops().allgatherInto(tensor, output);
    }

    /**
     * Named, as Horovod's {@code hvd.allgather(tensor, name=...)}, into {@code output}: the name lets the engine
     * recognise the op when it comes again. A small allgather repeated under its name (every rank's rows unchanged, at
     * most 256 bytes of result) then runs on the calling thread within one exchange of messages.
     *
     * <pre>{@code
     * float[] mine = {accuracy, loss};
     * float[] all = new float[2 * comm.size()];
     * comm.allgatherInto("metrics", Tensor.of(mine, 1, 2), Tensor.of(all, comm.size(), 2));   // every step
     * }</pre>
     */
    public final Tensor allgatherInto(String name, Tensor tensor, Tensor output) {
        return ops().allgatherInto(name, tensor, output);
    }

    /** Allgather into {@code output}, asynchronously (see {@link #allgatherInto(Tensor, Tensor)}). */
    public final Handle<Tensor> allgatherIntoAsync(String name, Tensor tensor, Tensor output) {
        return ops().allgatherIntoAsync(name, tensor, output);
    }

    /** Every rank's array, in rank order, into {@code output} (see {@link #allgatherInto(Tensor, Tensor)}). */
    public final float[] allgatherInto(float[] data, float[] output) {
        ops().allgatherInto(Tensor.of(data), Tensor.of(output));
        return output;
    }

    /** Every rank's array, in rank order, into {@code output} (see {@link #allgatherInto(Tensor, Tensor)}). */
    public final double[] allgatherInto(double[] data, double[] output) {
        ops().allgatherInto(Tensor.of(data), Tensor.of(output));
        return output;
    }

    /** Every rank's array, in rank order, into {@code output} (see {@link #allgatherInto(Tensor, Tensor)}). */
    public final int[] allgatherInto(int[] data, int[] output) {
        ops().allgatherInto(Tensor.of(data), Tensor.of(output));
        return output;
    }

    /** Every rank's array, in rank order, into {@code output} (see {@link #allgatherInto(Tensor, Tensor)}). */
    public final long[] allgatherInto(long[] data, long[] output) {
        ops().allgatherInto(Tensor.of(data), Tensor.of(output));
        return output;
    }

    // ---- broadcast

    /**
     * In place: {@code root}'s tensor is copied into every rank's tensor.
     *
     * @param root a job rank, a member of the set
     */
    public final Tensor broadcast(Tensor tensor, int root) {
        return ops().broadcast(tensor, setRank(root));
    }

    /**
     * In place and named, as Horovod's {@code hvd.broadcast(tensor, root_rank, name=...)}: a small broadcast repeated
     * under its name (at most 256 bytes) runs on the calling thread within one exchange of messages.
     *
     * <pre>{@code
     * int[] stop = {rank == 0 && converged ? 1 : 0};
     * comm.broadcast("stop", Tensor.of(stop), 0);   // every step: rank 0 decides for all
     * }</pre>
     *
     * @param root a job rank, a member of the set
     */
    public final Tensor broadcast(String name, Tensor tensor, int root) {
        return ops().broadcast(name, tensor, setRank(root));
    }

    /** Broadcast, asynchronously; {@code root} is a job rank, a member of the set. */
    public final Handle<Tensor> broadcastAsync(String name, Tensor tensor, int root) {
        return ops().broadcastAsync(name, tensor, setRank(root));
    }

    /** In place: {@code root}'s array is copied into every rank's; returns {@code data}. */
    public final float[] broadcast(float[] data, int root) {
        ops().broadcast(Tensor.of(data), setRank(root));
        return data;
    }

    /** In place: {@code root}'s array is copied into every rank's; returns {@code data}. */
    public final double[] broadcast(double[] data, int root) {
        ops().broadcast(Tensor.of(data), setRank(root));
        return data;
    }

    /** In place: {@code root}'s array is copied into every rank's; returns {@code data}. */
    public final int[] broadcast(int[] data, int root) {
        ops().broadcast(Tensor.of(data), setRank(root));
        return data;
    }

    /** In place: {@code root}'s array is copied into every rank's; returns {@code data}. */
    public final long[] broadcast(long[] data, int root) {
        ops().broadcast(Tensor.of(data), setRank(root));
        return data;
    }

    // ---- alltoall, reducescatter

    /**
     * Sends {@code splits[i]} rows (first-dimension slices, in order) to the set's {@code i}-th rank and returns the
     * rows received from every rank, in rank order. {@code splits == null} splits the first dimension evenly (it must
     * divide).
     */
    public final AlltoallResult alltoall(Tensor tensor, long[] splits) {
        return alltoallAsync(null, tensor, splits).await();
    }

    /** Alltoall, asynchronously. */
    public final Handle<AlltoallResult> alltoallAsync(String name, Tensor tensor, long[] splits) {
        return ops().alltoallAsync(name, tensor, splits);
    }

    /**
     * Reduces across ranks and returns this rank's slice of the result: the first dimension is split into as many
     * parts as the set has ranks, the first {@code rows % ranks} ranks getting one extra row.
     */
    public final Tensor reducescatter(Tensor tensor, ReduceOp op) {
        return reducescatterAsync(null, tensor, op).await();
    }

    /** Reducescatter, asynchronously. */
    public final Handle<Tensor> reducescatterAsync(String name, Tensor tensor, ReduceOp op) {
        return ops().reducescatterAsync(name, tensor, op);
    }

    // ---- synchronisation

    /** Returns once every rank of the set has called it. */
    public final void barrier() {
        ops().barrier();
    }

    /**
     * Declares that this rank has no more data this epoch. The other ranks' collectives go on with this rank
     * contributing zeros (allreduce) or no rows (allgather) until every rank has joined.
     *
     * @return the job rank of the last rank to join
     */
    public final int join() {
        return jobRank(ops().join());
    }

    // ---- objects

    /**
     * {@code root}'s object, Java-serialised and sent to every rank: for small things every rank needs (a
     * configuration, a vocabulary), not for tensors.
     *
     * <pre>{@code
     * Config c = comm.broadcastObject(rank == 0 ? Config.load() : null, 0);   // rank 0's config on every rank
     * }</pre>
     *
     * @param root a job rank, a member of the set
     */
    public final <T extends Serializable> T broadcastObject(T object, int root) {
        return ObjectCollectives.broadcast(ops(), object, setRank(root));
    }

    /**
     * Every rank's object, Java-serialised, in rank order.
     *
     * <pre>{@code
     * List<Integer> counts = comm.allgatherObject(mySamples);   // one count per rank, in rank order
     * }</pre>
     */
    public final <T extends Serializable> List<T> allgatherObject(T object) {
        return ObjectCollectives.allgather(ops(), object);
    }
}
