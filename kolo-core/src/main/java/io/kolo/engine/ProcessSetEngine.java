package io.kolo.engine;

import io.kolo.EngineStats;
import io.kolo.KoloException;
import io.kolo.bootstrap.LazyLogger;
import io.kolo.collective.CollectiveOps;
import io.kolo.collective.Scratch;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;

/**
 * One process set's side of the {@link Engine} on this rank: its own submission queue, negotiation (the cycle's bit
 * vector and coordinator round among the set's ranks), response cache, fusion, timeline and stall inspector, over the
 * set's own {@link CollectiveOps} (ranks renumbered 0..k-1). The engine runs every set's cycle in turn on one thread,
 * so sets make progress independently: an op waiting in one set never holds up another.
 *
 * <p>Each cycle every rank of the set contributes a bit vector to a bitwise-AND allreduce: flags (does anyone have
 * new, uncached requests, want to shut down, have joined...) and one bit per response-cache position (my op
 * with that cached response is ready). Ops ready everywhere from the cache run without further talk. Only
 * when someone has something new does the cycle add a coordinator round: requests gathered at the set's rank 0,
 * which checks them, fuses what is ready and broadcasts the responses.
 *
 * <p>The last small allreduce, broadcast or allgather repeated from the cache rides with the bit vector (the
 * <em>eager</em> op, see {@link CycleVote}, {@link EagerExchange}), so a repeated loss or metric costs one round of
 * messages, not two; called blocking and named, it needs no op at all: its caller runs the cycle with its tensor as
 * the payload ({@link DirectOp}).
 *
 * <p>The parts, each the one owner of its state: {@link Admission} holds where a drained op waits (its cache
 * position, or the next coordinator round), {@link Outcomes} the pending ops and how they end, {@link SetEnding}
 * whether the set takes ops and why not, {@link CycleVote} the bit vector, {@link CoordinatorRound} the slow path,
 * {@link FusionPlanner} fusion; one {@link OpExecutor} per kind of collective runs the responses. This class keeps
 * submission, the order of a cycle, the join op, and what a failure does.
 */
final class ProcessSetEngine implements CycleAgent {
    private static final System.Logger LOG = LazyLogger.of(ProcessSetEngine.class);
    /** Names whose in-flight slot is kept between ops, at least (see {@link InFlightNames}). */
    private static final int KEPT_NAMES = 4096;

    private final int id;
    private final CollectiveOps ops;
    private final int rank;
    private final int size;
    private final EngineSettings settings;
    private final FailureExplainer explainer;
    private final CycleRunner runner;
    private final SubmissionQueue queue = new SubmissionQueue();
    private final Submissions submissions;
    /** Whether the set takes ops, and why not. */
    private final SetEnding ending;
    /** Removes this set from the engine, on every member at the same point (null for the global set). */
    private final java.util.function.Consumer<String> remove;

    // State below is touched only by the thread running the cycle.
    private final ResponseCache cache;
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
    private final Counter cachedOps = new Counter();
    private final Counter fusedBuffers = new Counter();
    private final Counter eagerOps = new Counter();
    private final EngineTuning tuning;
    private final DirectOp direct;
    private final EagerExchange eager;
    /** Global set: whether this rank's other sets were busy lately (set before each cycle by the {@link Engine}). */
    private boolean otherSetsBusy;
    /** Global set: the start of the last cycle whose vote said that other ranks' sets are busy while ours are not. */
    private long peersBusyNanos = System.nanoTime() - java.util.concurrent.TimeUnit.DAYS.toNanos(1);
    private boolean peersBusy;
    /** The response whose collective runs now, for a timed-out caller's message ({@link #waitingFor}); else null. */
    private volatile Response executing;

    /**
     * @param id      the set's id (0: every rank of the job)
     * @param members the set's ranks in the job, in set-rank order (for messages that name ranks)
     * @param ops     the collectives over the set's ranks, renumbered 0..k-1
     * @param remove  what ends a set but the global one when its ranks agree it must (called with why)
     */
    ProcessSetEngine(int id, int[] members, CollectiveOps ops, EngineSettings settings, FailureExplainer explainer,
                     CycleRunner runner, OpActivity activity, java.util.function.Consumer<String> remove) {
        this.id = id;
        this.ops = ops;
        this.rank = ops.rank();
        this.size = ops.size();
        this.settings = settings;
        this.explainer = explainer;
        this.ending = new SetEnding(rank, explainer);
        this.remove = remove;
        this.runner = runner;
        this.cache = new ResponseCache(settings.cacheCapacity(), settings.eagerAllreduceBytes());
        InFlightNames inFlight = new InFlightNames(Math.max(KEPT_NAMES, settings.cacheCapacity()));
        this.submissions = new Submissions(rank, inFlight);
        this.direct = new DirectOp(cache, inFlight, rank);
        this.vote = new CycleVote(settings.cacheCapacity(), settings.eagerAllreduceBytes());
        this.admission = new Admission(cache, vote, settings.cacheCapacity(), rank);
        this.outcomes = new Outcomes(rank, inFlight, activity);
        this.fusionPlanner = new FusionPlanner(settings.fusionThresholdBytes(), outcomes.pending());
        this.coordinator = new CoordinatorRound(ops, settings, fusionPlanner, members, id);
        this.trace = OpTrace.open(settings, rank, id);
        this.execution = new Execution(ops, outcomes.pending(), fusion, scratch, trace, outcomes, members.clone(), id);
        executors.putAll(execution.executors());
        this.tuning = new EngineTuning(id, rank, settings, ops, fusionPlanner, runner, cache, admission);
        this.eager = new EagerExchange(cache, admission, vote, direct, execution, tuning);
        executors.put(OpKind.JOIN, (r, negotiated) -> {
            if (joinOp != null) {
                Op op = joinOp;
                joinOp = null;
                op.setLastJoined(r.lastJoined());
                outcomes.complete(op);
            }
        });
    }

    int id() {
        return id;
    }

    int rank() {
        return rank;
    }

    int size() {
        return size;
    }

    /** Queues an op (see {@link Engine#submit}). */
    void submit(Op op) {
        submissions.name(op);
        ending.checkUsable();
        submissions.claim(op, runner.thread());
        op.submittedNanos = System.nanoTime();
        queue.add(op);
        if (ending.isTerminated()) {
            // The set ended after checkUsable(): its last failQueued() may have run before our add.
            failQueued();
        } else {
            runner.submitted(op.submittedNanos);
        }
    }

    /**
     * Whether a blocking op of this name may run now as the set's direct op, asked before taking the cycle (from any
     * thread): only the cache's repeated op may, so a blocking op that is not it, the usual case for large ones, costs
     * no hand-over of the cycle.
     */
    boolean mayRunNow(String name) {
        return cache.mayBeRepeated(name);
    }

    /**
     * The set's direct op ({@link Engine#allreduceNow} and the like) while it can take one: the set goes on and writes
     * no timeline (every op there needs its spans, and so its op); else null.
     */
    DirectOp direct() {
        return ending.running() && !trace.enabled() ? direct : null;
    }

    /** Counters since start (updated by the cycles, read from any thread). */
    EngineStats stats() {
        return new EngineStats(coordinator.rounds(), cachedOps.get(), fusedBuffers.get(), outcomes.completed(),
                eagerOps.get());
    }

    /** Rank 0's figures of who this set's ranks waited for, or null on the other ranks. */
    CoordinatorFigures coordinatorFigures() {
        return coordinator.figures();
    }

    RuntimeException failure() {
        return ending.fatal();
    }

    /** Asks every rank of the set to stop (they agree on it in a cycle's vote). */
    void requestShutdown() {
        ending.requestShutdown();
    }

    /**
     * What the op named {@code name} is still waiting for: the rank that stopped answering, with its host, when the
     * exchange now running (its data, another op's, or the cycle's vote) has long waited on a peer; its data, when it
     * runs now (a timed-out wait said "some rank has not submitted it yet"); else what the set's rank 0 saw missing
     * when it last looked, or null.
     */
    String waitingFor(String name) {
        Response r = executing;
        boolean running = r != null && r.names().contains(name);
        String peer = explainer.explainStall(r == null ? "the negotiation of '" + name + "'"
                : r.kind().label() + " '" + (running ? name : r.names().getFirst()) + "'");
        return peer != null ? peer : running ? "every rank submitted it and its data is being exchanged, but some rank"
                + " has stopped sending (a stopped, swapped-out or overloaded process, or a network problem)"
                : coordinator.waitingFor(name);
    }

    /**
     * Ends this set because the whole engine failed: its ops fail with {@code error}. Called on the cycle's thread
     * when another set's cycle failed, since they share one job and one transport.
     */
    void failWith(RuntimeException error) {
        if (ending.failedFirst(error)) {
            failAll(error);
        }
    }

    /** Ends this set without a failure (the set was removed): what is left fails saying {@code why}. */
    void endBecause(String why) {
        ending.removed(why);
    }

    /**
     * Global set only, before its cycle: whether this rank's other process sets ran or waited for ops lately, which
     * the cycle's vote tells every rank.
     */
    void otherSetsBusy(boolean busy) {
        otherSetsBusy = busy;
    }

    /**
     * Global set only: whether the last cycle's vote said that some rank's other process sets are busy while this
     * rank's are not. Every cycle of such a set's ranks includes the global set's vote, which waits for this rank: a
     * rank that paced its cycles as an idle rank does (up to an idle cycle apart) would set the pace of every op of
     * sets it is not even in. Such a rank cycles promptly instead; each cycle then waits in the transport for the
     * busy ranks' next one, which costs no CPU beyond that wait.
     */
    boolean peersBusy() {
        return peersBusy;
    }

    /** Global set only: when {@link #peersBusy} last held (the start of that cycle). */
    long peersBusyNanos() {
        return peersBusyNanos;
    }

    @Override
    public boolean hasWork() {
        return outcomes.hasPending() || joinOp != null || admission.hasRequests();
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
        if (ending.fatal() == null) {
            failAll(hasWork() || !queue.isEmpty() ? ending.failure() : ending.known());
        }
        ending.terminated();
        failQueued();
        trace.close();
        fusion.close();
        scratch.close();
        vote.close();
        if (id != 0) {
            // The global set's collectives belong to the communicator; a set's were made for it.
            ops.close();
        }
    }

    /** One cycle; a failure or an agreed shutdown ends the engine for every thread. True when it ended. */
    @Override
    public boolean cycle(long now) {
        boolean finished;
        try {
            finished = negotiate(now);
        } catch (RuntimeException | Error e) {
            RuntimeException crash = EngineCrash.explain(rank, e, outcomes.pendingOps(), explainer);
            ending.failed(crash);
            LOG.log(System.Logger.Level.DEBUG, "rank " + rank + " engine stopped", e);
            failAll(crash);
            finished = true;
        }
        trace.flush();
        return finished;
    }

    /** One negotiation cycle; returns true when the ranks agreed to shut down. */
    private boolean negotiate(long now) {
        cycleStartNanos = now;
        drainQueue(now);
        // Only positions below the cache's high-water mark can hold anything. The mark is the same on every
        // rank (every rank applies the same cache updates), so the bit vector's length agrees too; keeping it
        // short keeps the cycle's loops and its allreduce small when few names are in use.
        int high = cache.highWater();
        admission.expire(now);
        long flags = (admission.hasRequests() ? 0 : CycleVote.NOTHING_NEW)
                | (ending.shutdownRequested() ? 0 : CycleVote.NO_SHUTDOWN)
                | (joinOp == null ? CycleVote.NOT_JOINED : 0) | (vote.anyInvalidHere() ? 0 : CycleVote.ALL_VALID)
                | (coordinator.tableBusy() || tuning.hasPending() ? 0 : CycleVote.TABLE_EMPTY)
                | (otherSetsBusy ? 0 : CycleVote.OTHER_SETS_QUIET);
        admission.fillVote(flags, high);
        eager.exchange(ops);

        boolean anyNew = vote.anyNot(CycleVote.NOTHING_NEW);
        boolean anyShutdown = vote.anyNot(CycleVote.NO_SHUTDOWN);
        boolean anyJoined = vote.anyNot(CycleVote.NOT_JOINED);
        boolean anyInvalid = vote.anyNot(CycleVote.ALL_VALID);
        boolean tableBusy = vote.anyNot(CycleVote.TABLE_EMPTY);
        peersBusy = !otherSetsBusy && vote.anyNot(CycleVote.OTHER_SETS_QUIET);
        if (peersBusy) {
            peersBusyNanos = now;
        }
        vote.settleValidity(ops);
        if (eager.finish(anyJoined)) {
            cachedOps.increment();
            eagerOps.increment();
        }
        if (anyInvalid) {
            admission.eraseInvalid(high);
        }
        fromCache.clear();
        toExecute.clear();
        cachedOps.add(admission.takeReady(anyJoined, fromCache));
        fusionPlanner.fuse(fromCache, toExecute);
        if (anyNew || anyInvalid || anyJoined || tableBusy) {
            toExecute.addAll(coordinator.run(admission.takeRequests(), tuning.takePending(), tuning.receiver()));
        }
        if (!toExecute.isEmpty()) {
            trace.cycleStart();
        }
        for (int i = 0; i < toExecute.size(); i++) {
            execute(toExecute.get(i));
        }
        admission.revalidate();
        tuning.endOfCycle();
        String stalled = coordinator.takeEnding();
        return stalled != null ? endEverywhere(stalled) : anyShutdown;
    }

    /**
     * Every rank of the set heard in this cycle's round that the set ends (the stall shutdown): its ops and later
     * submissions fail with {@code why}, on the ranks that never submitted the stalled op too. The global set's end
     * ends the engine (true); another set is removed.
     */
    private boolean endEverywhere(String why) {
        KoloException e = new KoloException(why);
        if (id == 0) {
            ending.failed(e);
        } else {
            ending.removed(why);
            remove.accept(why);
        }
        failAll(e);
        return id == 0;
    }

    private void drainQueue(long now) {
        for (Op op = queue.takeAll(), next; op != null; op = next) {
            next = SubmissionQueue.detach(op);
            op.drainedNanos = now;
            lastDrainNanos = now;
            if (op.kind == OpKind.JOIN) {
                joinOp = op;
                admission.admitJoin(op);
                continue;
            }
            outcomes.track(op);
            admission.admit(op);
        }
    }

    private void execute(Response r) {
        long negotiated = trace.clock();
        if (r.isError()) {
            for (int i = 0; i < r.names().size(); i++) {
                // The op may also be parked on a cache slot or queued for the coordinator; it is over now.
                outcomes.failPending(r.names().get(i), r.error(), op -> {
                    admission.withdraw(op);
                    trace.failed(op, r.error());
                });
            }
            return;
        }
        if (r.names().size() > 1) {
            fusedBuffers.increment();
        }
        executing = r;
        try {
            executors.get(r.kind()).execute(r, negotiated);
        } finally {
            executing = null;
        }
        tuning.ran(r.totalBytes());
        for (int i = 0; i < r.names().size(); i++) {
            cache.put(r.part(i));
        }
    }

    private void failAll(RuntimeException error) {
        List<Op> all = outcomes.takeAllPending();
        for (Op op : admission.dropAll()) {
            // Every op waiting for the coordinator is pending but a join.
            if (!all.contains(op)) {
                all.add(op);
            }
        }
        if (joinOp != null && !all.contains(joinOp)) {
            all.add(joinOp);
        }
        joinOp = null;
        for (Op op : all) {
            trace.failed(op, error.getMessage());
            outcomes.failWith(op, error);
        }
        failQueued();
    }

    private void failQueued() {
        Op queued = queue.takeAll();
        if (queued == null) {
            return;
        }
        RuntimeException f = ending.forQueued();
        for (Op op = queued, next; op != null; op = next) {
            next = SubmissionQueue.detach(op);
            outcomes.failWith(op, f);
        }
    }
}
