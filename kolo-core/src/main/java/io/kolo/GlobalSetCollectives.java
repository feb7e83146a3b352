package io.kolo;

import java.util.List;

/**
 * The collectives of the global set (every rank), each a one-line form over its {@link SetCollectives}: a table kept
 * apart from the communicator's own job (joining, process sets, closing), as {@link ProcessSetCollectives} is for the
 * other sets. {@link Communicator} is its only subclass.
 */
abstract sealed class GlobalSetCollectives extends ProcessSetCollectives implements ObjectCollectives
        permits Communicator {

    /** The collectives of the set of every rank. */
    abstract SetCollectives global();

    /** In place: {@code tensor} becomes the reduction over all ranks. */
    public Tensor allreduce(Tensor tensor, ReduceOp op) {
        return global().allreduce(tensor, op);
    }

    /**
     * In place, with float tensors sent and reduced as 16-bit floats; see {@link Compression} for the trade-off.
     *
     * <pre>{@code
     * comm.allreduce(Tensor.of(gradient), ReduceOp.AVERAGE, Compression.FP16);
     * }</pre>
     */
    public Tensor allreduce(Tensor tensor, ReduceOp op, Compression compression) {
        return global().allreduce(tensor, op, compression);
    }

    /**
     * In place and named, as Horovod's {@code hvd.allreduce(tensor, name=...)}: the name lets the engine recognise the
     * op when it comes again. A small allreduce repeated under its name (a loss, a metric, at most
     * {@code KOLO_EAGER_ALLREDUCE_BYTES}) then runs on the calling thread within one exchange of messages.
     *
     * <pre>{@code
     * float[] loss = {batchLoss};
     * comm.allreduce("loss", Tensor.of(loss), ReduceOp.AVERAGE);   // every step, the same name
     * }</pre>
     */
    public Tensor allreduce(String name, Tensor tensor, ReduceOp op) {
        return global().allreduce(name, tensor, op, 1.0, 1.0);
    }

    /** Named and in place, with factors applied before and after the reduction (see {@link #allreduce(String, Tensor, ReduceOp)}). */
    public Tensor allreduce(String name, Tensor tensor, ReduceOp op, double prescale, double postscale) {
        return global().allreduce(name, tensor, op, prescale, postscale);
    }

    public Handle<Tensor> allreduceAsync(String name, Tensor tensor, ReduceOp op) {
        return global().allreduceAsync(name, tensor, op);
    }

    /** In place, asynchronously, compressed (see {@link Compression}); every rank passes the same compression. */
    public Handle<Tensor> allreduceAsync(String name, Tensor tensor, ReduceOp op, Compression compression) {
        return global().allreduceAsync(name, tensor, op, 1.0, 1.0, compression);
    }

    /**
     * In place, asynchronously, with factors applied before ({@code prescale}) and after ({@code postscale})
     * the reduction, as Horovod does for gradient pre-division. Compressed as {@code KOLO_COMPRESSION} says.
     */
    public Handle<Tensor> allreduceAsync(String name, Tensor tensor, ReduceOp op, double prescale, double postscale) {
        return global().allreduceAsync(name, tensor, op, prescale, postscale, defaultCompression());
    }

    /**
     * In place, asynchronously, with pre/post factors and {@code compression} (ignored for integer and 16-bit
     * tensors). Every rank must pass the same compression for the same op.
     */
    public Handle<Tensor> allreduceAsync(String name, Tensor tensor, ReduceOp op, double prescale, double postscale,
                                         Compression compression) {
        return global().allreduceAsync(name, tensor, op, prescale, postscale, compression);
    }

    /**
     * In place: several tensors negotiated and fused as one unit, so they complete together (Horovod's grouped
     * allreduce). Members are named {@code name.0}, {@code name.1}, ...
     */
    public Handle<List<Tensor>> groupedAllreduceAsync(String name, List<Tensor> tensors, ReduceOp op) {
        return global().groupedAllreduceAsync(name, tensors, op, defaultCompression());
    }

    /** Grouped allreduce with {@code compression} of the float members (see {@link Compression}). */
    public Handle<List<Tensor>> groupedAllreduceAsync(String name, List<Tensor> tensors, ReduceOp op,
                                                      Compression compression) {
        return global().groupedAllreduceAsync(name, tensors, op, compression);
    }

    public List<Tensor> groupedAllreduce(List<Tensor> tensors, ReduceOp op) {
        return groupedAllreduceAsync(null, tensors, op).await();
    }

    /** Grouped allreduce, float members compressed (see {@link Compression}). */
    public List<Tensor> groupedAllreduce(List<Tensor> tensors, ReduceOp op, Compression compression) {
        return groupedAllreduceAsync(null, tensors, op, compression).await();
    }

    /** Concatenates every rank's tensor along the first dimension, in rank order (first dimensions may differ). */
    public Tensor allgather(Tensor tensor) {
        return global().allgather(tensor);
    }

    public Handle<Tensor> allgatherAsync(String name, Tensor tensor) {
        return global().allgatherAsync(name, tensor);
    }

    /**
     * Every rank's tensor, concatenated along the first dimension in rank order, into {@code output} (which must
     * hold exactly that many elements of the same type; see {@link ArrayCollectives#allgatherInto(Tensor, Tensor)}).
     */
    @Override
    public Tensor allgatherInto(Tensor tensor, Tensor output) {
        return global().allgatherInto(tensor, output);
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
    public Tensor allgatherInto(String name, Tensor tensor, Tensor output) {
        return global().allgatherInto(name, tensor, output);
    }

    public Handle<Tensor> allgatherIntoAsync(String name, Tensor tensor, Tensor output) {
        return global().allgatherIntoAsync(name, tensor, output);
    }

    /** In place: {@code root}'s tensor is copied into every rank's tensor. */
    public Tensor broadcast(Tensor tensor, int root) {
        return global().broadcast(tensor, root);
    }

    /**
     * In place and named, as Horovod's {@code hvd.broadcast(tensor, root_rank, name=...)}: a small broadcast repeated
     * under its name (at most 256 bytes) runs on the calling thread within one exchange of messages.
     *
     * <pre>{@code
     * int[] stop = {rank == 0 && converged ? 1 : 0};
     * comm.broadcast("stop", Tensor.of(stop), 0);   // every step: rank 0 decides for all
     * }</pre>
     */
    public Tensor broadcast(String name, Tensor tensor, int root) {
        return global().broadcast(name, tensor, root);
    }

    public Handle<Tensor> broadcastAsync(String name, Tensor tensor, int root) {
        return global().broadcastAsync(name, tensor, root);
    }

    /**
     * Sends {@code splits[r]} rows (first-dimension slices, in order) to rank {@code r} and returns the rows
     * received from every rank. {@code splits == null} splits the first dimension evenly (it must divide).
     */
    public AlltoallResult alltoall(Tensor tensor, long[] splits) {
        return alltoallAsync(null, tensor, splits).await();
    }

    public Handle<AlltoallResult> alltoallAsync(String name, Tensor tensor, long[] splits) {
        return global().alltoallAsync(name, tensor, splits);
    }

    /**
     * Reduces across ranks and returns this rank's slice of the result: the first dimension is split into
     * {@code size()} parts, the first {@code rows % size()} ranks getting one extra row.
     */
    public Tensor reducescatter(Tensor tensor, ReduceOp op) {
        return reducescatterAsync(null, tensor, op).await();
    }

    public Handle<Tensor> reducescatterAsync(String name, Tensor tensor, ReduceOp op) {
        return global().reducescatterAsync(name, tensor, op);
    }

    /** Returns once every rank has called it. */
    public void barrier() {
        global().barrier();
    }

    /**
     * Declares that this rank has no more data this epoch. The other ranks' collectives go on with this rank
     * contributing zeros (allreduce) or no rows (allgather) until every rank has joined.
     *
     * @return the last rank to join
     */
    public int join() {
        return global().join();
    }
}
