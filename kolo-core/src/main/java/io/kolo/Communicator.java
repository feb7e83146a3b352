package io.kolo;

import io.kolo.bootstrap.KeyValueStore;
import io.kolo.collective.Hosts;
import io.kolo.engine.Engine;
import io.kolo.engine.EngineSettings;
import io.kolo.transport.Transport;
import io.kolo.view.MetricPoints;
import io.kolo.view.RankReporter;

import java.util.List;
import java.util.Map;

/**
 * One rank's membership in a job: its {@link Topology}, the collectives of every rank (inherited from
 * {@link Collectives}), those of a {@link ProcessSet} ({@link #on(ProcessSet)}), and leaving the job. Most programs use
 * the static {@link Kolo} facade, which holds one communicator per process; tests and Spark's local mode create several
 * ranks in one JVM with {@link #local(int)}.
 *
 * <pre>{@code
 * List<Communicator> ranks = Communicator.local(4);          // 4 ranks as threads of this JVM
 * // on each rank's thread:
 * float[] x = {comm.rank(), 1};
 * comm.allreduce(x, ReduceOp.SUM);                          // x == {6, 4} on every rank
 * }</pre>
 */
public final class Communicator extends Collectives implements AutoCloseable {
    private final Topology topology;
    private final Engine engine;
    private final Transport transport;
    private final FailureDiagnosis diagnosis;
    private final AutoCloseable[] owned;
    private volatile boolean closed;
    private final ProcessSets sets;
    private final SetCollectives all;
    /** The program's metric points ({@link #report}); the facade's own, shared by its successive communicators. */
    private volatile MetricPoints points = new MetricPoints();
    /** Elastic resets the process went through before this communicator (the facade's count). */
    private volatile int resets;
    /** Publishes this rank's figures for the job view; null when the view is off. */
    private volatile RankReporter reporter;
    // The job's view, when this rank holds it (rank 0 serving the store under mpirun or srun).
    private volatile io.kolo.view.ViewHolder view;

    /** @param hosts every rank's host (process sets are built from it) */
    Communicator(Topology topology, Hosts hosts, Engine engine, Transport transport,
                 FailureDiagnosis diagnosis, AutoCloseable... owned) {
        this.topology = topology;
        this.engine = engine;
        this.transport = transport;
        this.diagnosis = diagnosis;
        this.owned = owned;
        EngineSettings settings = engine.settings();
        this.sets = new ProcessSets(engine, transport, hosts, settings.algorithms(), settings.smallMessageBytes(),
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

    /** Where this rank runs: its rank, local rank and cross rank. */
    public Topology topology() {
        return topology;
    }

    /** This rank, 0..size()-1. */
    public int rank() {
        return topology.rank();
    }

    /** How many ranks the job has. */
    public int size() {
        return topology.size();
    }

    /** This rank's rank among the ranks of its host. */
    public int localRank() {
        return topology.localRank();
    }

    /** How many ranks run on this rank's host. */
    public int localSize() {
        return topology.localSize();
    }

    /**
     * How many ranks with this rank's local rank have a smaller rank (Horovod's cross rank): the rank of this rank's
     * host among the hosts that run its local rank, not a host number once hosts run different numbers of ranks.
     */
    public int crossRank() {
        return topology.crossRank();
    }

    /** How many hosts run a rank of this local rank. */
    public int crossSize() {
        return topology.crossSize();
    }

    /**
     * Reports this rank's value of a metric now, for the job view ({@code kolo run --dashboard}, {@code --report}):
     * a loss, an accuracy, samples per second. See {@link #report(String, double, long)}.
     */
    public void report(String name, double value) {
        points.add(name, value, -1);
    }

    /**
     * Reports this rank's value of a metric at training step {@code step}, for the job view, which charts each name
     * over steps per rank ({@code "progress"}, a fraction from 0 to 1 of the whole job, gives its percentage and
     * remaining time). It never blocks, never communicates on the calling thread and allocates nothing: the value goes
     * into a ring of this rank's newest 256 points, which a background thread publishes every
     * {@code KOLO_VIEW_INTERVAL_MS} when the view is on ({@code KOLO_VIEW=1}); with the view off it is only kept.
     * Report each name at most a few hundred times per interval: older points beyond 256 are not published.
     *
     * <pre>{@code
     * for (long step = 0; step < steps; step++) {
     *     double loss = trainStep();
     *     comm.report("loss", loss, step);
     *     comm.report("progress", (step + 1) / (double) steps);
     * }
     * }</pre>
     *
     * @param step the training step, or -1 for none
     * @throws IllegalArgumentException when {@code name} is null or blank
     */
    public void report(String name, double value, long step) {
        points.add(name, value, step);
    }

    /** The facade's points and reset count, kept across the communicators it makes (elastic resets). */
    void adopt(MetricPoints facadePoints, int resetsBefore) {
        points = facadePoints;
        resets = resetsBefore;
    }

    /**
     * Starts publishing this rank's figures and reported points for the job view to {@code store}, the job's store,
     * every {@code interval}, until this communicator closes.
     */
    void publishView(KeyValueStore store, String host, int generation, java.time.Duration interval) {
        reporter = RankReporter.start(store, engine, new RankReporter.Identity(rank(), size(), host,
                ProcessHandle.current().pid(), generation), interval, () -> points, () -> resets);
    }

    /** Holds the job's view until this communicator closes, after its own last snapshot. */
    void holdView(io.kolo.view.ViewHolder held) {
        view = held;
    }

    /** This rank's engine counters (coordinator rounds, cache hits, fused buffers), for diagnostics. */
    public EngineStats stats() {
        return engine.stats();
    }

    // ---- process sets

    /**
     * The collectives of {@code set}, as Horovod's {@code process_set=} argument: the same ops among the set's ranks
     * only. Only members call it; results in rank order come in the set's rank order, and a broadcast's root is a job
     * rank. For the global set this is the communicator itself.
     *
     * <pre>{@code
     * ProcessSet trainers = ProcessSet.of(0, 1, 2);
     * comm.on(trainers).allreduce(gradients, ReduceOp.AVERAGE);   // ranks 0-2 only
     * }</pre>
     *
     * @throws IllegalArgumentException when this rank is not a member, or the set is not registered with this
     *                                  communicator or was removed
     */
    public Collectives on(ProcessSet set) {
        if (set == sets.global()) {
            return this;
        }
        return sets.on(set);
    }

    @Override
    SetCollectives ops() {
        return all;
    }

    @Override
    int setRank(int root) {
        return root;
    }

    @Override
    int jobRank(int setRank) {
        return setRank;
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
     * if (firstHalf.included()) comm.on(firstHalf).allreduce(x, ReduceOp.SUM);
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
        RankReporter r = reporter;
        if (r != null) {
            // Its last snapshot, while the store is there.
            r.close();
        }
        io.kolo.view.ViewHolder v = view;
        if (v != null) {
            // Frozen after this rank's last snapshot, before the store it reads goes with the rank.
            v.close();
        }
        engine.shutdown();
        sets.release();
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
