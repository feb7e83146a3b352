package io.kolo;

import java.util.List;

/**
 * Every collective of {@link Communicator} once more with a {@link ProcessSet} as its last argument: the same op among
 * the set's ranks only. Only members call them; ranks are numbered within the set, except a broadcast's root, which is
 * a job rank (as in Horovod and PyTorch). A table of one-line forms kept apart from the communicator's own job (joining,
 * the global set's collectives, closing); {@link GlobalSetCollectives} is its only subclass.
 */
abstract sealed class ProcessSetCollectives permits GlobalSetCollectives {

    /** The collectives of {@code set} on this rank, which must be a member. */
    abstract SetCollectives on(ProcessSet set);

    /** The compression of allreduces that name none ({@code KOLO_COMPRESSION}). */
    abstract Compression defaultCompression();

    public Tensor allreduce(Tensor tensor, ReduceOp op, ProcessSet set) {
        return on(set).allreduce(tensor, op);
    }

    public Tensor allreduce(Tensor tensor, ReduceOp op, Compression compression, ProcessSet set) {
        return on(set).allreduce(tensor, op, compression);
    }

    /** Named and in place, among {@code set}'s ranks (see {@link Communicator#allreduce(String, Tensor, ReduceOp)}). */
    public Tensor allreduce(String name, Tensor tensor, ReduceOp op, ProcessSet set) {
        return on(set).allreduce(name, tensor, op, 1.0, 1.0);
    }

    public Handle<Tensor> allreduceAsync(String name, Tensor tensor, ReduceOp op, ProcessSet set) {
        return on(set).allreduceAsync(name, tensor, op);
    }

    public Handle<Tensor> allreduceAsync(String name, Tensor tensor, ReduceOp op, Compression compression,
                                         ProcessSet set) {
        return on(set).allreduceAsync(name, tensor, op, 1.0, 1.0, compression);
    }

    public Handle<Tensor> allreduceAsync(String name, Tensor tensor, ReduceOp op, double prescale, double postscale,
                                         ProcessSet set) {
        return on(set).allreduceAsync(name, tensor, op, prescale, postscale, defaultCompression());
    }

    public Handle<Tensor> allreduceAsync(String name, Tensor tensor, ReduceOp op, double prescale, double postscale,
                                         Compression compression, ProcessSet set) {
        return on(set).allreduceAsync(name, tensor, op, prescale, postscale, compression);
    }

    public Handle<List<Tensor>> groupedAllreduceAsync(String name, List<Tensor> tensors, ReduceOp op, ProcessSet set) {
        return on(set).groupedAllreduceAsync(name, tensors, op, defaultCompression());
    }

    public Handle<List<Tensor>> groupedAllreduceAsync(String name, List<Tensor> tensors, ReduceOp op,
                                                      Compression compression, ProcessSet set) {
        return on(set).groupedAllreduceAsync(name, tensors, op, compression);
    }

    public List<Tensor> groupedAllreduce(List<Tensor> tensors, ReduceOp op, ProcessSet set) {
        return groupedAllreduceAsync(null, tensors, op, set).await();
    }

    public List<Tensor> groupedAllreduce(List<Tensor> tensors, ReduceOp op, Compression compression, ProcessSet set) {
        return groupedAllreduceAsync(null, tensors, op, compression, set).await();
    }

    public Tensor allgather(Tensor tensor, ProcessSet set) {
        return on(set).allgather(tensor);
    }

    /** Allgather among {@code set}'s ranks into {@code output}, which the caller keeps. */
    public Tensor allgatherInto(Tensor tensor, Tensor output, ProcessSet set) {
        return on(set).allgatherInto(tensor, output);
    }

    public Handle<Tensor> allgatherAsync(String name, Tensor tensor, ProcessSet set) {
        return on(set).allgatherAsync(name, tensor);
    }

    /** @param root the root's job rank, a member of {@code set} */
    public Tensor broadcast(Tensor tensor, int root, ProcessSet set) {
        return broadcastAsync(null, tensor, root, set).await();
    }

    /**
     * Named and in place, among {@code set}'s ranks (see {@link Communicator#broadcast(String, Tensor, int)}).
     *
     * @param root the root's job rank, a member of {@code set}
     */
    public Tensor broadcast(String name, Tensor tensor, int root, ProcessSet set) {
        return on(set).broadcast(name, tensor, rootIn(set, root));
    }

    /** @param root the root's job rank, a member of {@code set} */
    public Handle<Tensor> broadcastAsync(String name, Tensor tensor, int root, ProcessSet set) {
        return on(set).broadcastAsync(name, tensor, rootIn(set, root));
    }

    /** {@code splits[i]} rows go to the set's {@code i}-th rank; the rows received come in the set's rank order. */
    public AlltoallResult alltoall(Tensor tensor, long[] splits, ProcessSet set) {
        return alltoallAsync(null, tensor, splits, set).await();
    }

    public Handle<AlltoallResult> alltoallAsync(String name, Tensor tensor, long[] splits, ProcessSet set) {
        return on(set).alltoallAsync(name, tensor, splits);
    }

    public Tensor reducescatter(Tensor tensor, ReduceOp op, ProcessSet set) {
        return reducescatterAsync(null, tensor, op, set).await();
    }

    public Handle<Tensor> reducescatterAsync(String name, Tensor tensor, ReduceOp op, ProcessSet set) {
        return on(set).reducescatterAsync(name, tensor, op);
    }

    public void barrier(ProcessSet set) {
        on(set).barrier();
    }

    /** @return the job rank of the set's last rank to join */
    public int join(ProcessSet set) {
        return set.ranks().get(on(set).join());
    }

    public float[] allreduce(float[] data, ReduceOp op, ProcessSet set) {
        return on(set).allreduce(data, op);
    }

    public double[] allreduce(double[] data, ReduceOp op, ProcessSet set) {
        return on(set).allreduce(data, op);
    }

    public float[] allreduce(float[] data, ReduceOp op, Compression compression, ProcessSet set) {
        return on(set).allreduce(data, op, compression);
    }

    public double[] allreduce(double[] data, ReduceOp op, Compression compression, ProcessSet set) {
        return on(set).allreduce(data, op, compression);
    }

    public int[] allreduce(int[] data, ReduceOp op, ProcessSet set) {
        return on(set).allreduce(data, op);
    }

    public long[] allreduce(long[] data, ReduceOp op, ProcessSet set) {
        return on(set).allreduce(data, op);
    }

    public float[] allgather(float[] data, ProcessSet set) {
        return on(set).allgather(data);
    }

    public double[] allgather(double[] data, ProcessSet set) {
        return on(set).allgather(data);
    }

    public int[] allgather(int[] data, ProcessSet set) {
        return on(set).allgather(data);
    }

    public long[] allgather(long[] data, ProcessSet set) {
        return on(set).allgather(data);
    }

    public float[] broadcast(float[] data, int root, ProcessSet set) {
        return on(set).broadcast(data, rootIn(set, root));
    }

    public double[] broadcast(double[] data, int root, ProcessSet set) {
        return on(set).broadcast(data, rootIn(set, root));
    }

    public int[] broadcast(int[] data, int root, ProcessSet set) {
        return on(set).broadcast(data, rootIn(set, root));
    }

    public long[] broadcast(long[] data, int root, ProcessSet set) {
        return on(set).broadcast(data, rootIn(set, root));
    }

    public <T extends java.io.Serializable> T broadcastObject(T object, int root, ProcessSet set) {
        return on(set).broadcastObject(object, rootIn(set, root));
    }

    public <T extends java.io.Serializable> List<T> allgatherObject(T object, ProcessSet set) {
        return on(set).allgatherObject(object);
    }

    private static int rootIn(ProcessSet set, int root) {
        int r = set.rankOf(root);
        if (r < 0) {
            throw new IllegalArgumentException("broadcast root " + root + " is not in process set " + set.id()
                    + " (ranks " + set.ranks() + "); the root is a job rank that belongs to the set");
        }
        return r;
    }
}
