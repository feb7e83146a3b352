package io.kolo;

import io.kolo.engine.Engine;
import io.kolo.engine.EngineSettings;
import io.kolo.engine.Op;
import io.kolo.engine.OpKind;
import io.kolo.transport.Transport;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
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
public final class Communicator implements ObjectCollectives, AutoCloseable {
    private final Topology topology;
    private final Engine engine;
    private final Transport transport;
    private final FailureDiagnosis diagnosis;
    private final Handle.Driver driver;
    private final AutoCloseable[] owned;
    private volatile boolean closed;
    private final AllreduceOps allreduces;

    Communicator(Topology topology, Engine engine, Transport transport, FailureDiagnosis diagnosis,
                         AutoCloseable... owned) {
        this.topology = topology;
        this.engine = engine;
        this.transport = transport;
        this.diagnosis = diagnosis;
        this.driver = engine::drive;
        this.owned = owned;
        this.allreduces = new AllreduceOps(topology.size());
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

    // ---- allreduce

    /** In place: {@code tensor} becomes the reduction over all ranks. */
    public Tensor allreduce(Tensor tensor, ReduceOp op) {
        return allreduceAsync(null, tensor, op).await();
    }

    /**
     * In place, with float tensors sent and reduced as 16-bit floats; see {@link Compression} for the trade-off.
     *
     * <pre>{@code
     * comm.allreduce(Tensor.of(gradient), ReduceOp.AVERAGE, Compression.FP16);
     * }</pre>
     */
    public Tensor allreduce(Tensor tensor, ReduceOp op, Compression compression) {
        return allreduceAsync(null, tensor, op, 1.0, 1.0, compression).await();
    }

    public Handle<Tensor> allreduceAsync(String name, Tensor tensor, ReduceOp op) {
        return allreduceAsync(name, tensor, op, 1.0, 1.0);
    }

    /** In place, asynchronously, compressed (see {@link Compression}); every rank passes the same compression. */
    public Handle<Tensor> allreduceAsync(String name, Tensor tensor, ReduceOp op, Compression compression) {
        return allreduceAsync(name, tensor, op, 1.0, 1.0, compression);
    }

    /**
     * In place, asynchronously, with factors applied before ({@code prescale}) and after ({@code postscale})
     * the reduction, as Horovod does for gradient pre-division. Compressed as {@code KOLO_COMPRESSION} says.
     */
    public Handle<Tensor> allreduceAsync(String name, Tensor tensor, ReduceOp op, double prescale, double postscale) {
        return allreduceAsync(name, tensor, op, prescale, postscale, engine.settings().compression());
    }

    /**
     * In place, asynchronously, with pre/post factors and {@code compression} (ignored for integer and 16-bit
     * tensors). Every rank must pass the same compression for the same op.
     */
    public Handle<Tensor> allreduceAsync(String name, Tensor tensor, ReduceOp op, double prescale, double postscale,
                                         Compression compression) {
        AllreduceOps.Allreduce a = allreduces.of(name, tensor, op, prescale, postscale, compression);
        return submit(a.op(), x -> a.finish(tensor));
    }

    /**
     * In place: several tensors negotiated and fused as one unit, so they complete together (Horovod's grouped
     * allreduce). Members are named {@code name.0}, {@code name.1}, ...
     */
    public Handle<List<Tensor>> groupedAllreduceAsync(String name, List<Tensor> tensors, ReduceOp op) {
        return groupedAllreduceAsync(name, tensors, op, engine.settings().compression());
    }

    /** Grouped allreduce with {@code compression} of the float members (see {@link Compression}). */
    public Handle<List<Tensor>> groupedAllreduceAsync(String name, List<Tensor> tensors, ReduceOp op,
                                                      Compression compression) {
        if (tensors.isEmpty()) {
            throw new IllegalArgumentException("grouped allreduce needs at least one tensor");
        }
        String group = name != null ? name : "grouped_allreduce.noname." + groupCounter.incrementAndGet();
        List<Handle<Tensor>> handles = new ArrayList<>();
        for (int i = 0; i < tensors.size(); i++) {
            Tensor t = tensors.get(i);
            AllreduceOps.Allreduce a = allreduces.of(group + "." + i, t, op, 1.0, 1.0, compression);
            handles.add(submit(a.op().group(group, tensors.size()), x -> a.finish(t)));
        }
        Handle<List<Tensor>> all = new Handle<>(group, engine.settings().timeout());
        all.explainedBy(n -> engine.waitingFor(n + ".0"));
        all.drivenBy((done, now, deadline) -> engine.drive(() -> handles.getLast().poll() || done.getAsBoolean(),
                now, deadline));
        Thread.ofVirtual().start(() -> {
            try {
                List<Tensor> out = new ArrayList<>();
                for (Handle<Tensor> h : handles) {
                    out.add(h.await());
                }
                all.complete(out);
            } catch (RuntimeException e) {
                all.fail(e);
            }
        });
        return all;
    }

    public List<Tensor> groupedAllreduce(List<Tensor> tensors, ReduceOp op) {
        return groupedAllreduceAsync(null, tensors, op).await();
    }

    /** Grouped allreduce, float members compressed (see {@link Compression}). */
    public List<Tensor> groupedAllreduce(List<Tensor> tensors, ReduceOp op, Compression compression) {
        return groupedAllreduceAsync(null, tensors, op, compression).await();
    }

    private final java.util.concurrent.atomic.AtomicLong groupCounter = new java.util.concurrent.atomic.AtomicLong();

    // ---- allgather

    /** Concatenates every rank's tensor along the first dimension, in rank order (first dimensions may differ). */
    public Tensor allgather(Tensor tensor) {
        return allgatherAsync(null, tensor).await();
    }

    public Handle<Tensor> allgatherAsync(String name, Tensor tensor) {
        requireRank(tensor, "allgather");
        Tensor[] out = new Tensor[1];
        Op o = Op.of(OpKind.ALLGATHER, name, tensor.dataType(), tensor.shape(), tensor.segment())
                .outputs(shape -> (out[0] = Tensor.allocateLike(tensor, tensor.dataType(), shape)).segment());
        return submit(o, x -> out[0]);
    }

    // ---- broadcast

    /** In place: {@code root}'s tensor is copied into every rank's tensor. */
    public Tensor broadcast(Tensor tensor, int root) {
        return broadcastAsync(null, tensor, root).await();
    }

    public Handle<Tensor> broadcastAsync(String name, Tensor tensor, int root) {
        Op o = Op.of(OpKind.BROADCAST, name, tensor.dataType(), tensor.shape(), tensor.segment()).root(root);
        return submit(o, x -> tensor);
    }

    // ---- alltoall

    /**
     * Sends {@code splits[r]} rows (first-dimension slices, in order) to rank {@code r} and returns the rows
     * received from every rank. {@code splits == null} splits the first dimension evenly (it must divide).
     */
    public AlltoallResult alltoall(Tensor tensor, long[] splits) {
        return alltoallAsync(null, tensor, splits).await();
    }

    public Handle<AlltoallResult> alltoallAsync(String name, Tensor tensor, long[] splits) {
        requireRank(tensor, "alltoall");
        long rows = tensor.shape()[0];
        long[] s = splits;
        if (s == null) {
            if (rows % size() != 0) {
                throw new IllegalArgumentException("alltoall without splits needs a first dimension divisible by "
                        + size() + " ranks, got " + rows + "; pass explicit splits");
            }
            s = new long[size()];
            java.util.Arrays.fill(s, rows / size());
        }
        Tensor[] out = new Tensor[1];
        Op o = Op.of(OpKind.ALLTOALL, name, tensor.dataType(), tensor.shape(), tensor.segment()).splits(s)
                .outputs(shape -> (out[0] = Tensor.allocateLike(tensor, tensor.dataType(), shape)).segment());
        return submit(o, x -> new AlltoallResult(out[0], x.receivedSplits()));
    }

    // ---- reducescatter

    /**
     * Reduces across ranks and returns this rank's slice of the result: the first dimension is split into
     * {@code size()} parts, the first {@code rows % size()} ranks getting one extra row.
     */
    public Tensor reducescatter(Tensor tensor, ReduceOp op) {
        return reducescatterAsync(null, tensor, op).await();
    }

    public Handle<Tensor> reducescatterAsync(String name, Tensor tensor, ReduceOp op) {
        requireRank(tensor, "reducescatter");
        if (op == ReduceOp.ADASUM) {
            throw new IllegalArgumentException("ReduceOp.ADASUM is an allreduce of whole vectors; reducescatter takes"
                    + " SUM, AVERAGE, MIN, MAX or PRODUCT");
        }
        Tensor[] out = new Tensor[1];
        Op o = Op.of(OpKind.REDUCESCATTER, name, tensor.dataType(), tensor.shape(), tensor.segment())
                .reduce(op, 1.0, 1.0)
                .outputs(shape -> (out[0] = Tensor.allocateLike(tensor, tensor.dataType(), shape)).segment());
        return submit(o, x -> out[0]);
    }

    // ---- synchronisation

    /** Returns once every rank has called it. */
    public void barrier() {
        Op o = Op.of(OpKind.BARRIER, null, DataType.INT8, new long[0], java.lang.foreign.MemorySegment.NULL);
        submit(o, x -> null).await();
    }

    /**
     * Declares that this rank has no more data this epoch. The other ranks' collectives go on with this rank
     * contributing zeros (allreduce) or no rows (allgather) until every rank has joined.
     *
     * @return the last rank to join
     */
    public int join() {
        Op o = Op.of(OpKind.JOIN, null, DataType.INT8, new long[0], java.lang.foreign.MemorySegment.NULL);
        return submit(o, Op::lastJoined).await();
    }

    // ---- plumbing

    private <T> Handle<T> submit(Op op, java.util.function.Function<Op, T> result) {
        if (closed) {
            throw new IllegalStateException("this communicator (rank " + rank() + ") is closed");
        }
        Handle<T> handle = new Handle<>(op.name(), engine.settings().timeout());
        op.listener(new Op.Listener() {
            @Override
            public void completed(Op o) {
                T value;
                try {
                    value = result.apply(o);
                } catch (RuntimeException e) {
                    // Turning the result into the caller's form (e.g. decompressing) failed: the caller must hear
                    // of it now, not wait out its timeout.
                    handle.fail(new KoloException(o.kind().label() + " '" + o.name() + "' ran, but its result could"
                            + " not be delivered on rank " + rank() + ": " + e, e));
                    return;
                }
                handle.complete(value);
            }

            @Override
            public void failed(Op o, RuntimeException error) {
                handle.fail(error);
            }
        });
        handle.drivenBy(driver);
        handle.explainedBy(engine::waitingFor);
        engine.submit(op);
        handle.named(op.name());
        return handle;
    }

    private static void requireRank(Tensor t, String op) {
        if (t.shape().length == 0) {
            throw new IllegalArgumentException(op + " needs a tensor with at least one dimension (rows), got a scalar");
        }
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
