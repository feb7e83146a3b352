package io.kolo;

import io.kolo.engine.Engine;
import io.kolo.engine.EngineSettings;
import io.kolo.transport.Transport;

import java.util.List;
import java.util.Map;

/**
 * One rank's membership in a job: its {@link Topology} and the collectives. Most programs use the static
 * {@link Kolo} facade, which holds one communicator per process; tests and Spark's local mode create several
 * ranks in one JVM with {@link #local(int)}.
 *
 * <p>Every collective has a blocking form and an {@code Async} form returning a {@link Handle}. Ops are
 * matched across ranks by name; an op without a name gets one generated from a per-kind counter, so unnamed
 * ops must be submitted in the same order on every rank. Results are bit-identical on every rank.
 *
 * <pre>{@code
 * List<Communicator> ranks = Communicator.local(4);          // 4 ranks as threads of this JVM
 * // on each rank's thread:
 * float[] x = {comm.rank(), 1};
 * comm.allreduce(x, ReduceOp.SUM);                          // x == {6, 4} on every rank
 * }</pre>
 */
public final class Communicator extends ProcessSetCollectives implements ObjectCollectives, AutoCloseable {
    private final Topology topology;
    private final Engine engine;
    private final Transport transport;
    private final FailureDiagnosis diagnosis;
    private final AutoCloseable[] owned;
    private volatile boolean closed;
    private final ProcessSets sets;
    private final SetCollectives all;

    /** @param everyRank every rank's topology, in rank order (process sets are built from it) */
    Communicator(Topology topology, List<Topology> everyRank, Engine engine, Transport transport,
                 FailureDiagnosis diagnosis, AutoCloseable... owned) {
        this.topology = topology;
        this.engine = engine;
        this.transport = transport;
        this.diagnosis = diagnosis;
        this.owned = owned;
        EngineSettings settings = engine.settings();
        this.sets = new ProcessSets(engine, transport, everyRank, settings.algorithms(), settings.smallMessageBytes(),
                settings.dynamicProcessSets(), this, () -> closed);
        this.all = sets.globalOps();
    }

    /** Joins the job described by this process's environment ({@code KOLO_*}, Open MPI, MPICH or Slurm variables). */
    public static Communicator fromEnvironment() {
        return fromEnvironment(System.getenv());
    }

    /**
     * Joins the job described by {@code env}. With no job variables at all this is a job of one rank.
     *
     * @throws BadSettingException      naming the variable when a setting is malformed (one line for all of them)
     * @throws KoloTimeoutException     naming the missing ranks when the others do not show up in time
     */
    public static Communicator fromEnvironment(Map<String, String> env) {
        return Jobs.fromEnvironment(env);
    }

    /**
     * Joins the job described by {@code env} and registers static process sets, in order, on every rank (see
     * {@link ProcessSet}): every rank passes the same sets, members or not.
     *
     * @throws KoloException on every rank when the ranks passed different sets, or a set is empty, lists a rank twice
     *                       or a rank the job does not have
     */
    public static Communicator fromEnvironment(Map<String, String> env, ProcessSet... processSets) {
        Communicator c = Jobs.fromEnvironment(env);
        try {
            for (ProcessSet s : processSets) {
                c.sets.addStatic(s);
            }
        } catch (RuntimeException e) {
            c.close();
            throw e;
        }
        return c;
    }

    /** {@code size} ranks as threads of this JVM, with the default settings. */
    public static List<Communicator> local(int size) {
        return local(size, Map.of());
    }

    /**
     * {@code size} ranks as threads of this JVM; {@code settings} holds {@code KOLO_*} engine settings
     * (fusion threshold, cycle time, cache capacity, timeline, stall and timeout seconds).
     */
    public static List<Communicator> local(int size, Map<String, String> settings) {
        if (size < 1) {
            throw new IllegalArgumentException("a job needs at least one rank, not " + size);
        }
        return Jobs.localHosts(1, size, EngineSettings.fromEnvironment(settings));
    }

    /**
     * {@code hosts * perHost} ranks as threads of this JVM that believe they run {@code perHost} to a host, packed
     * host by host, so that tests exercise the hierarchical collectives without several machines.
     */
    static List<Communicator> localHosts(int hosts, int perHost, Map<String, String> settings) {
        if (hosts < 1 || perHost < 1) {
            throw new IllegalArgumentException("a job needs at least one host and one rank per host, not "
                    + hosts + " x " + perHost);
        }
        return Jobs.localHosts(hosts, perHost, EngineSettings.fromEnvironment(settings));
    }

    public Topology topology() {
        return topology;
    }

    public int rank() {
        return topology.rank();
    }

    public int size() {
        return topology.size();
    }

    public int localRank() {
        return topology.localRank();
    }

    public int localSize() {
        return topology.localSize();
    }

    public int crossRank() {
        return topology.crossRank();
    }

    public int crossSize() {
        return topology.crossSize();
    }

    /** This rank's engine counters (coordinator rounds, cache hits, fused buffers), for diagnostics. */
    public EngineStats stats() {
        return engine.stats();
    }

    // ---- process sets

    @Override
    SetCollectives on(ProcessSet set) {
        return sets.of(set);
    }

    @Override
    Compression defaultCompression() {
        return engine.settings().compression();
    }

    /** The set of every rank (id 0). */
    public ProcessSet globalProcessSet() {
        return sets.global();
    }

    /** The registered process sets, the global one first, by id. */
    public List<ProcessSet> processSets() {
        return sets.all();
    }

    /**
     * Adds a process set while the job runs; needs {@code KOLO_DYNAMIC_PROCESS_SETS=1}. A collective of the global set:
     * every rank calls it with the same ranks, in the same order relative to its other process-set calls, members or
     * not. The new set's collectives are usable on return.
     *
     * <pre>{@code
     * ProcessSet firstHalf = comm.addProcessSet(0, 1);
     * if (firstHalf.included()) comm.allreduce(x, ReduceOp.SUM, firstHalf);
     * }</pre>
     *
     * @throws KoloException         on every rank when the ranks asked for different sets, or the set is empty, lists
     *                               a rank twice, names a rank the job does not have or repeats an existing set
     * @throws IllegalStateException when the job does not allow dynamic process sets
     */
    public ProcessSet addProcessSet(int... ranks) {
        return sets.add(ProcessSet.of(ranks));
    }

    /**
     * Removes a process set while the job runs ({@code KOLO_DYNAMIC_PROCESS_SETS=1}); every rank calls it, members or
     * not. Its ops still in flight fail, saying it was removed.
     */
    public void removeProcessSet(ProcessSet set) {
        sets.remove(set);
    }

    // ---- collectives of the global set

    /** In place: {@code tensor} becomes the reduction over all ranks. */
    public Tensor allreduce(Tensor tensor, ReduceOp op) {
        return all.allreduce(tensor, op);
    }

    /**
     * In place, with float tensors sent and reduced as 16-bit floats; see {@link Compression} for the trade-off.
     *
     * <pre>{@code
     * comm.allreduce(Tensor.of(gradient), ReduceOp.AVERAGE, Compression.FP16);
     * }</pre>
     */
    public Tensor allreduce(Tensor tensor, ReduceOp op, Compression compression) {
        return all.allreduce(tensor, op, compression);
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
        return all.allreduce(name, tensor, op, 1.0, 1.0);
    }

    /** Named and in place, with factors applied before and after the reduction (see {@link #allreduce(String, Tensor, ReduceOp)}). */
    public Tensor allreduce(String name, Tensor tensor, ReduceOp op, double prescale, double postscale) {
        return all.allreduce(name, tensor, op, prescale, postscale);
    }

    public Handle<Tensor> allreduceAsync(String name, Tensor tensor, ReduceOp op) {
        return all.allreduceAsync(name, tensor, op);
    }

    /** In place, asynchronously, compressed (see {@link Compression}); every rank passes the same compression. */
    public Handle<Tensor> allreduceAsync(String name, Tensor tensor, ReduceOp op, Compression compression) {
        return all.allreduceAsync(name, tensor, op, 1.0, 1.0, compression);
    }

    /**
     * In place, asynchronously, with factors applied before ({@code prescale}) and after ({@code postscale})
     * the reduction, as Horovod does for gradient pre-division. Compressed as {@code KOLO_COMPRESSION} says.
     */
    public Handle<Tensor> allreduceAsync(String name, Tensor tensor, ReduceOp op, double prescale, double postscale) {
        return all.allreduceAsync(name, tensor, op, prescale, postscale, engine.settings().compression());
    }

    /**
     * In place, asynchronously, with pre/post factors and {@code compression} (ignored for integer and 16-bit
     * tensors). Every rank must pass the same compression for the same op.
     */
    public Handle<Tensor> allreduceAsync(String name, Tensor tensor, ReduceOp op, double prescale, double postscale,
                                         Compression compression) {
        return all.allreduceAsync(name, tensor, op, prescale, postscale, compression);
    }

    /**
     * In place: several tensors negotiated and fused as one unit, so they complete together (Horovod's grouped
     * allreduce). Members are named {@code name.0}, {@code name.1}, ...
     */
    public Handle<List<Tensor>> groupedAllreduceAsync(String name, List<Tensor> tensors, ReduceOp op) {
        return all.groupedAllreduceAsync(name, tensors, op, engine.settings().compression());
    }

    /** Grouped allreduce with {@code compression} of the float members (see {@link Compression}). */
    public Handle<List<Tensor>> groupedAllreduceAsync(String name, List<Tensor> tensors, ReduceOp op,
                                                      Compression compression) {
        return all.groupedAllreduceAsync(name, tensors, op, compression);
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
        return all.allgather(tensor);
    }

    public Handle<Tensor> allgatherAsync(String name, Tensor tensor) {
        return all.allgatherAsync(name, tensor);
    }

    /**
     * Every rank's tensor, concatenated along the first dimension in rank order, into {@code output} (which must
     * hold exactly that many elements of the same type; see {@link ArrayCollectives#allgatherInto(Tensor, Tensor)}).
     */
    @Override
    public Tensor allgatherInto(Tensor tensor, Tensor output) {
        return all.allgatherInto(tensor, output);
    }

    public Handle<Tensor> allgatherIntoAsync(String name, Tensor tensor, Tensor output) {
        return all.allgatherIntoAsync(name, tensor, output);
    }

    /** In place: {@code root}'s tensor is copied into every rank's tensor. */
    public Tensor broadcast(Tensor tensor, int root) {
        return all.broadcast(tensor, root);
    }

    public Handle<Tensor> broadcastAsync(String name, Tensor tensor, int root) {
        return all.broadcastAsync(name, tensor, root);
    }

    /**
     * Sends {@code splits[r]} rows (first-dimension slices, in order) to rank {@code r} and returns the rows
     * received from every rank. {@code splits == null} splits the first dimension evenly (it must divide).
     */
    public AlltoallResult alltoall(Tensor tensor, long[] splits) {
        return alltoallAsync(null, tensor, splits).await();
    }

    public Handle<AlltoallResult> alltoallAsync(String name, Tensor tensor, long[] splits) {
        return all.alltoallAsync(name, tensor, splits);
    }

    /**
     * Reduces across ranks and returns this rank's slice of the result: the first dimension is split into
     * {@code size()} parts, the first {@code rows % size()} ranks getting one extra row.
     */
    public Tensor reducescatter(Tensor tensor, ReduceOp op) {
        return reducescatterAsync(null, tensor, op).await();
    }

    public Handle<Tensor> reducescatterAsync(String name, Tensor tensor, ReduceOp op) {
        return all.reducescatterAsync(name, tensor, op);
    }

    /** Returns once every rank has called it. */
    public void barrier() {
        all.barrier();
    }

    /**
     * Declares that this rank has no more data this epoch. The other ranks' collectives go on with this rank
     * contributing zeros (allreduce) or no rows (allgather) until every rank has joined.
     *
     * @return the last rank to join
     */
    public int join() {
        return all.join();
    }

    /**
     * Fails this rank as an internal error would (its cause recorded, its connections torn down); tests use it
     * to check that the others fail fast and name it.
     */
    void simulateCrash(String cause) {
        diagnosis.explain(new KoloException(cause));
    }

    /** Drops this rank's connections without a word, as a process that exits or is killed would; for tests. */
    void simulateExit() {
        transport.close();
    }

    /**
     * Leaves the job because this rank's own work failed, and closes this communicator: the other ranks' pending and
     * later operations fail at once with a {@link RankFailedException} naming this rank and {@code cause}, as they do
     * when a process started by {@code kolo run} dies of an uncaught exception. For ranks that are not processes of
     * their own (Spark tasks, threads), whose JVM goes on after the failure.
     *
     * <pre>{@code
     * try {
     *     train(comm);
     * } catch (Exception e) {
     *     comm.abort(e);        // the others fail with "rank 1 failed: IllegalStateException: ..."
     *     throw e;
     * }
     * }</pre>
     */
    public void abort(Throwable cause) {
        if (!closed) {
            diagnosis.explain(new KoloException(LastWords.describe(cause), cause));
        }
        close();
    }

    /** Stops this rank's engine (the other ranks stop at their next cycle) and releases its connections. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        engine.shutdown();
        transport.close();
        for (AutoCloseable c : owned) {
            try {
                c.close();
            } catch (Exception e) {
                System.getLogger(Communicator.class.getName()).log(System.Logger.Level.DEBUG, "close", e);
            }
        }
    }

    @Override
    public String toString() {
        return "Communicator[rank " + rank() + " of " + size() + "]";
    }
}
