package io.kolo.engine;

import io.kolo.EngineStats;
import io.kolo.KoloException;
import io.kolo.collective.CollectiveOps;
import io.kolo.collective.Scratch;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;

/**
 * Horovod's engine for one rank: callers submit named ops from any thread; one background thread per rank
 * agrees with the other ranks, cycle by cycle, on which ops are ready everywhere and in which order, then
 * runs them through {@link CollectiveOps} (which picks the algorithm).
 *
 * <p>Each cycle every rank contributes a bit vector to a bitwise-AND allreduce: flags (does anyone have
 * new, uncached requests, want to shut down, have joined...) and one bit per response-cache position (my op
 * with that cached response is ready). Ops ready everywhere from the cache run without further talk. Only
 * when someone has something new does the cycle add a coordinator round: requests gathered at rank 0,
 * which checks them, fuses what is ready and broadcasts the responses.
 *
 * <p>The last small allreduce repeated from the cache rides with the bit vector (the <em>eager</em> op, see
 * {@link CycleVote}), so a repeated loss or metric costs one round of messages, not two.
 *
 * <p>The parts: {@link CycleRunner} paces the cycles (on the engine's thread, or a waiting caller's), {@link CycleVote}
 * is the bit vector, {@link CoordinatorRound} the slow path, {@link FusionPlanner} fusion, one {@link OpExecutor} per
 * kind of collective runs the responses, {@link Outcomes} ends the ops. This class keeps submission, the order of a
 * cycle, and what a failure does.
 */
public final class Engine implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(Engine.class.getName());
    /** Names whose in-flight slot is kept between ops, at least (see {@link InFlightNames}). */
    private static final int KEPT_NAMES = 4096;

    private final CollectiveOps ops;
    private final int rank;
    private final int size;
    private final EngineSettings settings;
    private final FailureExplainer explainer;
    private final CycleRunner runner;
    private final SubmissionQueue queue = new SubmissionQueue();
    private final Submissions submissions;
    private volatile RuntimeException fatal;
    private volatile boolean shutdownRequested;
    private volatile boolean terminated;

    // State below is touched only by the thread running the cycle.
    private final PendingOps pending = new PendingOps();
    private final List<Op> toSend = new ArrayList<>();
    private final ResponseCache cache;
    private final CachePositionWaits parked;
    private final CycleVote vote;
    private final Admission admission;
    private final FusionPlanner fusionPlanner;
    private final CoordinatorRound coordinator;
    private final Outcomes outcomes;
    private final OpTrace trace;
    private final Scratch fusion = new Scratch();
    private final Scratch scratch = new Scratch();
    private final Execution execution;
    private final Map<OpKind, OpExecutor> executors = new EnumMap<>(OpKind.class);
    private Op joinOp;
    private long lastDrainNanos;
    /** When the current (or last) cycle began. */
    private long cycleStartNanos;
    /** Reused every cycle so that an idle engine cycling every millisecond makes no garbage. */
    private final List<Response> fromCache = new ArrayList<>();
    private final List<Response> toExecute = new ArrayList<>();
    private volatile long cachedOps;
    private volatile long fusedBuffers;
    private volatile long eagerOps;

    public Engine(CollectiveOps ops, EngineSettings settings, FailureExplainer explainer) {
        this.ops = ops;
        this.rank = ops.rank();
        this.size = ops.size();
        this.settings = settings;
        this.explainer = explainer;
        this.cache = new ResponseCache(settings.cacheCapacity(), settings.eagerAllreduceBytes());
        InFlightNames inFlight = new InFlightNames(Math.max(KEPT_NAMES, settings.cacheCapacity()));
        this.submissions = new Submissions(rank, inFlight);
        this.parked = new CachePositionWaits(settings.cacheCapacity());
        this.vote = new CycleVote(settings.cacheCapacity(), settings.eagerAllreduceBytes());
        this.admission = new Admission(rank, cache, parked, vote, toSend);
        this.fusionPlanner = new FusionPlanner(settings.fusionThresholdBytes(), pending);
        this.coordinator = new CoordinatorRound(ops, settings, fusionPlanner);
        this.outcomes = new Outcomes(rank, pending, inFlight);
        this.trace = OpTrace.open(settings, rank);
        this.execution = new Execution(ops, pending, fusion, scratch, trace, outcomes);
        executors.putAll(execution.executors());
        executors.put(OpKind.JOIN, (r, negotiated) -> {
            if (joinOp != null) {
                Op op = joinOp;
                joinOp = null;
                op.setLastJoined(r.lastJoined());
                outcomes.complete(op);
            }
        });
        this.runner = new CycleRunner("kolo-engine-" + rank, settings.cycleTime(), IdleStrategy.POLL_THEN_PARK,
                new Cycles());
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
     * Queues an op; its listener is called once it completes or fails. Unnamed ops get a generated name
     * ({@code allreduce.noname.7}), which matches across ranks only if every rank submits them in the same order.
     *
     * @throws IllegalArgumentException if an op of the same name is still in flight on this rank
     * @throws KoloException            if the engine has failed or shut down
     */
    public void submit(Op op) {
        submissions.name(op);
        checkUsable();
        submissions.claim(op, runner.thread());
        op.submittedNanos = System.nanoTime();
        queue.add(op);
        if (terminated) {
            // The engine ended after checkUsable(): its last failQueued() may have run before our add.
            failQueued();
        } else {
            runner.submitted(op.submittedNanos);
        }
    }

    private void checkUsable() {
        RuntimeException f = fatal;
        if (f != null) {
            throw Outcomes.copy(f, "cannot start a new collective");
        }
        if (shutdownRequested || terminated) {
            throw new KoloException("Kolo has been shut down on rank " + rank + "; call Kolo.init() again to start a new job");
        }
    }

    /** Counters since start (updated by the cycles, read from any thread). */
    public EngineStats stats() {
        return new EngineStats(coordinator.rounds(), cachedOps, fusedBuffers, outcomes.completed(), eagerOps);
    }

    /** The first fatal error, if the engine has failed. */
    public RuntimeException failure() {
        return fatal;
    }

    /** Stops the engine on every rank (the others see it at their next cycle) and waits for this rank's thread. */
    public void shutdown() {
        shutdownRequested = true;
        runner.wake();
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
     * What the op named {@code name} was still waiting for when rank 0 last looked (it tells every rank about ops that
     * have waited a while): "rank 2 had not submitted it after 19 s (ranks 0, 1 and 3 had)", or null.
     */
    public String waitingFor(String name) {
        return coordinator.waitingFor(name);
    }

    /** The engine's side of its {@link CycleRunner}. */
    private final class Cycles implements CycleAgent {
        @Override
        public boolean cycle() {
            return runCycle();
        }

        @Override
        public boolean hasWork() {
            return !pending.isEmpty() || joinOp != null || !toSend.isEmpty();
        }

        @Override
        public boolean queueEmpty() {
            return queue.isEmpty();
        }

        @Override
        public long lastDrainNanos() {
            return lastDrainNanos;
        }

        @Override
        public long cycleStartNanos() {
            return cycleStartNanos;
        }

        @Override
        public long completedOps() {
            return outcomes.completed();
        }

        @Override
        public void close() {
            if (fatal == null) {
                failAll(new KoloException("Kolo was shut down before this op completed (a rank called shutdown)"));
            }
            terminated = true;
            failQueued();
            trace.close();
            fusion.close();
            scratch.close();
            vote.close();
        }
    }

    /** One cycle; a failure or an agreed shutdown ends the engine for every thread. True when it ended. */
    private boolean runCycle() {
        boolean finished;
        try {
            finished = cycle();
        } catch (RuntimeException | Error e) {
            RuntimeException cause = e instanceof RuntimeException re ? re
                    : new KoloException("rank " + rank + " engine crashed: " + e, e);
            RuntimeException explained;
            try {
                explained = explainer.explain(cause);
            } catch (RuntimeException ex) {
                explained = cause;
            }
            fatal = explained;
            LOG.log(System.Logger.Level.DEBUG, "rank " + rank + " engine stopped", e);
            failAll(explained);
            finished = true;
        }
        trace.flush();
        return finished;
    }

    /** One negotiation cycle; returns true when the ranks agreed to shut down. */
    private boolean cycle() {
        long now = System.nanoTime();
        cycleStartNanos = now;
        drainQueue(now);
        // Only positions below the cache's high-water mark can hold anything. The mark is the same on every
        // rank (every rank applies the same cache updates), so the bit vector's length agrees too; keeping it
        // short keeps the cycle's loops and its allreduce small when few names are in use.
        int high = cache.highWater();
        admission.expire(now);
        long flags = (toSend.isEmpty() ? CycleVote.NOTHING_NEW : 0) | (shutdownRequested ? 0 : CycleVote.NO_SHUTDOWN)
                | (joinOp == null ? CycleVote.NOT_JOINED : 0) | (vote.anyInvalidHere() ? 0 : CycleVote.ALL_VALID)
                | (coordinator.tableBusy() ? 0 : CycleVote.TABLE_EMPTY);
        vote.fill(flags, high, parked);
        // The eager op depends only on state every rank shares, and the cache drops the mark when the entry changes,
        // so the payload always fits the space reserved for it after the bit vector.
        int eager = cache.repeated();
        Op eagerOp = eager >= 0 ? parked.get(eager) : null;
        vote.exchange(ops, eager >= 0 ? cache.get(eager) : null, eagerOp);

        boolean anyNew = vote.anyNot(CycleVote.NOTHING_NEW);
        boolean anyShutdown = vote.anyNot(CycleVote.NO_SHUTDOWN);
        boolean anyJoined = vote.anyNot(CycleVote.NOT_JOINED);
        boolean anyInvalid = vote.anyNot(CycleVote.ALL_VALID);
        boolean tableBusy = vote.anyNot(CycleVote.TABLE_EMPTY);
        if (eagerOp != null && !anyJoined && vote.readyEverywhere(eager) && vote.validEverywhere(eager)) {
            parked.remove(eager);
            cachedOps++;
            eagerOps++;
            finishEager(cache.get(eager));
        }
        if (anyInvalid) {
            admission.eraseInvalid(high);
        }
        fromCache.clear();
        toExecute.clear();
        cachedOps += admission.takeReady(anyJoined, fromCache);
        fusionPlanner.fuse(fromCache, toExecute);
        if (anyNew || anyInvalid || anyJoined || tableBusy) {
            toExecute.addAll(coordinator.run(toSend, rank));
        }
        if (!toExecute.isEmpty()) {
            trace.cycleStart();
        }
        for (int i = 0; i < toExecute.size(); i++) {
            execute(toExecute.get(i));
        }
        admission.revalidate();
        return anyShutdown;
    }

    /** The eager op's payload was reduced with the bit vector and every rank's was real: finish it from there. */
    private void finishEager(Response r) {
        long negotiated = trace.clock();
        Op op = pending.get(r.names().getFirst());
        MemorySegment bits = vote.bits();
        long payloadAt = vote.payloadAt();
        Reductions.finish(bits, payloadAt, r.totalElements(), r, size);
        MemorySegment.copy(bits, payloadAt, op.input, 0, r.totalBytes());
        long done = trace.clock();
        execution.done(r, negotiated, negotiated, negotiated, done, true);
        cache.put(r);
    }

    private void drainQueue(long now) {
        for (Op op = queue.takeAll(), next; op != null; op = next) {
            next = SubmissionQueue.detach(op);
            op.drainedNanos = now;
            lastDrainNanos = now;
            if (op.kind == OpKind.JOIN) {
                joinOp = op;
                toSend.add(op);
                continue;
            }
            pending.put(op.name, op);
            admission.admit(op);
        }
    }

    private void execute(Response r) {
        long negotiated = trace.clock();
        if (r.isError()) {
            for (int i = 0; i < r.names().size(); i++) {
                Op op = pending.remove(r.names().get(i));
                if (op != null) {
                    // The op may also be parked on a cache slot or queued for the coordinator; it is over now.
                    toSend.remove(op);
                    parked.remove(op);
                    outcomes.fail(op, new KoloException(r.error()));
                }
            }
            return;
        }
        if (r.names().size() > 1) {
            fusedBuffers++;
        }
        executors.get(r.kind()).execute(r, negotiated);
        for (int i = 0; i < r.names().size(); i++) {
            cache.put(r.part(i));
        }
    }

    private void failAll(RuntimeException error) {
        List<Op> all = new ArrayList<>(pending.values());
        for (Op op : toSend) {
            if (!pending.containsKey(op.name)) {
                all.add(op);
            }
        }
        if (joinOp != null && !all.contains(joinOp)) {
            all.add(joinOp);
        }
        pending.clear();
        toSend.clear();
        joinOp = null;
        parked.clear();
        all.forEach(op -> outcomes.failWith(op, error));
        failQueued();
    }

    private void failQueued() {
        RuntimeException f = fatal != null ? fatal
                : new KoloException("Kolo was shut down before this op completed (a rank called shutdown)");
        for (Op op = queue.takeAll(), next; op != null; op = next) {
            next = SubmissionQueue.detach(op);
            outcomes.failWith(op, f);
        }
    }
}
