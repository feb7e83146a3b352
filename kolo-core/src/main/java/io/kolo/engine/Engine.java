package io.kolo.engine;

import io.kolo.DataType;
import io.kolo.EngineStats;
import io.kolo.KoloException;
import io.kolo.ReduceOp;
import io.kolo.bootstrap.LazyLogger;
import io.kolo.collective.CollectiveOps;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.BooleanSupplier;

/**
 * Horovod's engine for one rank: callers submit named ops from any thread; one background thread per rank
 * agrees with the other ranks, cycle by cycle, on which ops are ready everywhere and in which order, then
 * runs them through {@link CollectiveOps} (which picks the algorithm).
 *
 * <p>Each process set this rank belongs to negotiates on its own ({@link ProcessSetEngine}: queue, cache, fusion,
 * timeline, stall inspector); the engine's thread runs every set's cycle in turn, the global set (id 0) first, then
 * the others by id. Every rank of a set runs the set's cycles in the same order relative to every other set it shares
 * with a peer, so the sets can share one transport: the messages between two ranks always come in the same order on
 * both ends. Sets are added and removed only between cycles, at a point every rank agreed on (see
 * {@link #addProcessSet}).
 *
 * <p>{@link CycleRunner} paces the cycles (on the engine's thread, or a waiting caller's).
 */
public final class Engine implements AutoCloseable {
    private static final System.Logger LOG = LazyLogger.of(Engine.class);

    private final int rank;
    private final int size;
    private final EngineSettings settings;
    private final FailureExplainer explainer;
    private final CycleRunner runner;
    private final ProcessSetEngine global;
    /** Routing for submissions, from any thread: the sets this rank belongs to, by id. */
    private final Map<Integer, ProcessSetEngine> byId = new ConcurrentHashMap<>();
    /**
     * The sets in cycle order; changed only by the cycle's thread, read by the runner between cycles too (indexed reads
     * of a copy-on-write list allocate nothing).
     */
    private final List<ProcessSetEngine> cycling = new CopyOnWriteArrayList<>();
    /** Changes asked for during a cycle, applied once it ends (the cycle's thread only). */
    private final List<Runnable> betweenCycles = new ArrayList<>();
    /** Sets removed, so that a late submission can say so rather than "unknown". */
    private final Map<Integer, String> ended = new ConcurrentHashMap<>();
    /** What every set's ops have done, for the job view. */
    private final OpActivity activity = new OpActivity();

    public Engine(CollectiveOps ops, EngineSettings settings, FailureExplainer explainer) {
        this.rank = ops.rank();
        this.size = ops.size();
        this.settings = settings;
        this.explainer = explainer;
        this.runner = new CycleRunner("kolo-engine-" + rank, settings.cycleTime(), IdleStrategy.POLL_THEN_PARK,
                new Cycles());
        int[] everyone = new int[size];
        for (int r = 0; r < size; r++) {
            everyone[r] = r;
        }
        this.global = new ProcessSetEngine(0, everyone, ops, settings, explainer, runner, activity, null);
        byId.put(0, global);
        cycling.add(global);
        runner.start();
    }

    public int rank() {
        return rank;
    }

    public int size() {
        return size;
    }

    public EngineSettings settings() {
        return settings;
    }

    /**
     * Queues an op of the process set {@link Op#processSet} (0 unless set); its listener is called once it completes
     * or fails. Unnamed ops get a generated name ({@code allreduce.noname.7}), which matches across the set's ranks
     * only if every rank submits them in the same order.
     *
     * @throws IllegalArgumentException if an op of the same name is still in flight in that set on this rank
     * @throws KoloException            if the engine has failed or shut down, or the set was removed
     */
    public void submit(Op op) {
        // The global set, which every op without a set names, never goes away: no map lookup on its path.
        ProcessSetEngine set = op.processSet == 0 ? global : byId.get(op.processSet);
        if (set == null) {
            String why = ended.get(op.processSet);
            throw new KoloException(why != null ? why : "process set " + op.processSet + " is not registered on rank "
                    + rank + " (register it on every rank with addProcessSet, or pass it to Kolo.init)");
        }
        set.submit(op);
    }

    /**
     * Called on the cycle's thread, from the listener of an op of the global set that every rank completes in the same
     * cycle: from the next cycle on, this rank runs set {@code id}'s cycles too. Every member must call it for the same
     * op, and non-members must not.
     *
     * @param members the set's ranks in the job, ascending (the set's rank order)
     * @param ops     the collectives over those ranks, renumbered; the set owns them from now on
     */
    public void addProcessSet(int id, int[] members, CollectiveOps ops) {
        requireCycleThread();
        ProcessSetEngine set = new ProcessSetEngine(id, members.clone(), ops, settings, explainer, runner, activity,
                why -> removeProcessSet(id, why));
        // Submissions are accepted at once (the caller may submit before this cycle ends: they wait in the set's
        // queue); the set's cycles start with the next one.
        byId.put(id, set);
        betweenCycles.add(() -> cycling.add(set));
    }

    /**
     * Called like {@link #addProcessSet}: after this cycle set {@code id} stops on this rank; its unfinished ops fail
     * with {@code why}. A rank that is not a member only remembers why, for a late submission's error.
     */
    public void removeProcessSet(int id, String why) {
        requireCycleThread();
        betweenCycles.add(() -> {
            ended.put(id, why);
            ProcessSetEngine set = byId.remove(id);
            if (set != null) {
                cycling.remove(set);
                set.endBecause(why);
                set.close();
            }
        });
    }

    private void requireCycleThread() {
        if (!runner.ownsCycle()) {
            throw new IllegalStateException("process sets change only on the thread running the engine's cycle");
        }
    }

    /** Counters since start, over every process set (updated by the cycles, read from any thread). */
    public EngineStats stats() {
        EngineStats sum = global.stats();
        for (ProcessSetEngine set : byId.values()) {
            if (set != global) {
                EngineStats s = set.stats();
                sum = new EngineStats(sum.coordinatorRounds() + s.coordinatorRounds(), sum.cachedOps() + s.cachedOps(),
                        sum.fusedBuffers() + s.fusedBuffers(), sum.completedOps() + s.completedOps(),
                        sum.eagerOps() + s.eagerOps());
            }
        }
        return sum;
    }

    /** What this rank's ops have done, over every process set (read from any thread, for the job view). */
    public OpActivity activity() {
        return activity;
    }

    /**
     * Rank 0's figures of who the job's ranks waited for and what waits now (read from any thread, for the job view);
     * null on the other ranks.
     */
    public CoordinatorFigures coordinatorFigures() {
        return global.coordinatorFigures();
    }

    /** The first fatal error, if the engine has failed. */
    public RuntimeException failure() {
        return global.failure();
    }

    /** Stops the engine on every rank (the others see it at their next cycle) and waits for this rank's thread. */
    public void shutdown() {
        global.requestShutdown();
        runner.stop();
        boolean stopped;
        try {
            stopped = runner.join(settings.timeout());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            stopped = false;
        }
        if (!stopped) {
            LOG.log(System.Logger.Level.WARNING, "rank " + rank + ": engine did not stop within KOLO_TIMEOUT_SECONDS");
        }
    }

    @Override
    public void close() {
        shutdown();
    }

    /**
     * Runs this rank's cycles on the calling thread until {@code done} or the deadline, instead of waiting for the
     * engine thread to run them and wake the caller: a blocking collective then costs no hand-off between threads on
     * this rank. Returns early, without error, when the engine stops or fails; the caller then learns the outcome
     * from its handle.
     *
     * @param nowNanos      the caller's {@link System#nanoTime()} of a moment ago (it computed the deadline from it)
     * @param deadlineNanos when to give up driving, in {@link System#nanoTime()} terms
     */
    public void drive(BooleanSupplier done, long nowNanos, long deadlineNanos) {
        runner.drive(done, nowNanos, deadlineNanos);
    }

    /**
     * A blocking allreduce, run at once on the calling thread when it can be: a small allreduce repeated under one name
     * (the response cache's eager entry, which travels with the cycle's vote) needs no op, queue, handle or hand-off;
     * the caller runs the cycle with its tensor as the payload. Returns false when that is not possible now (another
     * thread runs a cycle, the request is not the eager entry's, a timeline is written, ...) or when not every rank of
     * the set had the op ready in that cycle: the caller then submits it as an ordinary op and awaits it. The name is
     * claimed as for {@link #submit} (a second op of the name in flight is refused), and every rank may run the same
     * op either way.
     *
     * @param set  the process set (0: every rank)
     * @param data the tensor: the payload, and where the result is written
     * @throws KoloException if the cycle failed (the job's failure, naming the op)
     */
    public boolean allreduceNow(int set, String name, DataType type, long[] shape, MemorySegment data, ReduceOp op,
                                double prescale, double postscale) {
        return runNow(set, name, OpKind.ALLREDUCE, type, shape, data, data, op, prescale, postscale, 0);
    }

    /**
     * A blocking broadcast from set rank {@code root}, in {@code data}, run at once on the calling thread when it is
     * the response cache's eager entry, as {@link #allreduceNow} runs an allreduce; false when the caller must submit it.
     */
    public boolean broadcastNow(int set, String name, DataType type, long[] shape, MemorySegment data, int root) {
        return runNow(set, name, OpKind.BROADCAST, type, shape, data, data, ReduceOp.SUM, 1.0, 1.0, root);
    }

    /**
     * A blocking allgather of {@code input} into {@code output}, run at once on the calling thread when it is the
     * response cache's eager entry and {@code output} holds exactly its result, as {@link #allreduceNow} runs an
     * allreduce; false when the caller must submit it. The caller has checked that {@code output} is writable memory
     * of the input's type.
     */
    public boolean allgatherNow(int set, String name, DataType type, long[] shape, MemorySegment input,
                                MemorySegment output) {
        return runNow(set, name, OpKind.ALLGATHER, type, shape, input, output, ReduceOp.SUM, 1.0, 1.0, 0);
    }

    /** The three above: arms the set's {@link DirectOp} and runs one cycle here; whether the op completed. */
    private boolean runNow(int set, String name, OpKind kind, DataType type, long[] shape, MemorySegment input,
                           MemorySegment output, ReduceOp op, double prescale, double postscale, int root) {
        ProcessSetEngine s = set == 0 ? global : byId.get(set);
        if (s == null || !s.mayRunNow(name) || !runner.enterCycle()) {
            return false;
        }
        long now = System.nanoTime();
        try {
            DirectOp direct = s.direct();
            boolean armed = direct != null && switch (kind) {
                case ALLREDUCE -> direct.armAllreduce(name, type, shape, input, op, prescale, postscale);
                case BROADCAST -> direct.armBroadcast(name, type, shape, input, root);
                default -> direct.armAllgather(name, type, shape, input, output);
            };
            if (!armed) {
                return false;
            }
            boolean done;
            try {
                runner.cycleHere(now);
            } finally {
                // Under the cycle still: the armed op is the cycle's state.
                done = direct.disarm();
            }
            RuntimeException failure = s.failure();
            if (!done && failure != null) {
                throw Outcomes.copy(failure, kind.label() + " '" + name + "' failed");
            }
            return done;
        } finally {
            runner.leaveCycle(now);
        }
    }

    /**
     * What the op named {@code name} of process set {@code set} was still waiting for when the set's rank 0 last
     * looked (it tells every rank about ops that have waited a while): "rank 2 had not submitted it after 19 s
     * (ranks 0, 1 and 3 had)", or null.
     */
    public String waitingFor(int set, String name) {
        ProcessSetEngine s = byId.get(set);
        return s == null ? null : s.waitingFor(name);
    }

    /** What the op named {@code name} of the global set was still waiting for (see {@link #waitingFor(int, String)}). */
    public String waitingFor(String name) {
        return global.waitingFor(name);
    }

    /** Every set's cycle in turn, as one cycle of the {@link CycleRunner}. */
    private final class Cycles implements CycleAgent {
        /**
         * How long after its last op a process set still counts as busy in the global set's vote (see
         * {@link ProcessSetEngine#peersBusy}): a set's ranks usually compute a while between ops, and the ranks
         * outside it should not fall back to idle pacing in that gap.
         */
        private static final long SET_BUSY_NANOS = java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(100);
        /** Ops completed by the sets other than the global one, when last looked at. */
        private long setOpsSeen;
        private long setsLastBusyNanos = System.nanoTime() - java.util.concurrent.TimeUnit.DAYS.toNanos(1);

        @Override
        public boolean cycle(long nowNanos) {
            global.otherSetsBusy(otherSetsBusy(nowNanos));
            boolean finished = global.cycle(nowNanos);
            if (!finished) {
                // Between the global set's cycle and the others': the point every rank agreed on for set changes.
                for (int i = 0; i < betweenCycles.size(); i++) {
                    betweenCycles.get(i).run();
                }
                betweenCycles.clear();
                for (int i = 1; i < cycling.size() && !finished; i++) {
                    // The global set's cycle may have waited for other ranks: each further set reads the clock anew.
                    finished = cycling.get(i).cycle(System.nanoTime());
                }
            }
            if (finished) {
                // One job, one transport: a set that failed takes every set down with the same error.
                RuntimeException failure = null;
                for (ProcessSetEngine set : cycling) {
                    if (set.failure() != null) {
                        failure = set.failure();
                        break;
                    }
                }
                if (failure != null) {
                    for (ProcessSetEngine set : cycling) {
                        set.failWith(failure);
                    }
                }
            }
            return finished;
        }

        /** Whether this rank's sets other than the global one have ops now, or completed one lately. */
        private boolean otherSetsBusy(long now) {
            long completed = 0;
            boolean busy = false;
            for (int i = 1; i < cycling.size(); i++) {
                ProcessSetEngine set = cycling.get(i);
                completed += set.completedOps();
                busy |= set.hasWork() || !set.queueEmpty();
            }
            if (busy || completed != setOpsSeen) {
                setOpsSeen = completed;
                setsLastBusyNanos = now;
            }
            return now - setsLastBusyNanos < SET_BUSY_NANOS;
        }

        @Override
        public boolean hasWork() {
            if (global.peersBusy()) {
                return true;
            }
            for (int i = 0; i < cycling.size(); i++) {
                if (cycling.get(i).hasWork()) {
                    return true;
                }
            }
            return false;
        }

        @Override
        public boolean queueEmpty() {
            for (int i = 0; i < cycling.size(); i++) {
                if (!cycling.get(i).queueEmpty()) {
                    return false;
                }
            }
            return true;
        }

        @Override
        public long lastDrainNanos() {
            // Other ranks' busy sets count as ops taken up here: this rank's next cycle starts at once.
            long last = global.lastDrainNanos();
            if (global.peersBusyNanos() - last > 0) {
                last = global.peersBusyNanos();
            }
            for (int i = 1; i < cycling.size(); i++) {
                long l = cycling.get(i).lastDrainNanos();
                if (l - last > 0) {
                    last = l;
                }
            }
            return last;
        }

        @Override
        public long cycleStartNanos() {
            return global.cycleStartNanos();
        }

        @Override
        public long completedOps() {
            long n = 0;
            for (int i = 0; i < cycling.size(); i++) {
                n += cycling.get(i).completedOps();
            }
            return n;
        }

        @Override
        public void close() {
            // A closed set still answers late submissions, with the failure or the shutdown.
            for (int i = cycling.size() - 1; i >= 0; i--) {
                cycling.get(i).close();
            }
        }
    }
}
