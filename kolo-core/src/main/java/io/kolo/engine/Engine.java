package io.kolo.engine;

import io.kolo.DataType;
import io.kolo.KoloException;
import io.kolo.RankFailedException;
import io.kolo.ReduceOp;
import io.kolo.collective.CollectiveOps;
import io.kolo.collective.Kernels;
import io.kolo.collective.Reduction;
import io.kolo.collective.Scratch;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;
import java.util.concurrent.locks.LockSupport;

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
 * <p>A small allreduce repeated under one name (a loss, a metric, a latency benchmark) would cost two rounds of
 * messages per cycle: the bit vector, then the data. So the last small allreduce that ran from the cache becomes the
 * cycle's <em>eager</em> op: every rank appends a payload of its size to the bit vector (its data when that op is ready
 * here), and both are reduced in one exchange. The op's own cache bit, ANDed over the ranks, says whether every
 * payload was real; if so the op is done, otherwise the payload is dropped and the op goes the usual way. Which op
 * is eager follows from the executed responses, identical on every rank, so the message sizes always agree.
 */
public final class Engine implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(Engine.class.getName());
    /** A cached op not ready everywhere within this time goes to the coordinator, where stalls are seen. */
    private static final long CACHE_GRACE_NANOS = TimeUnit.SECONDS.toNanos(1);
    /**
     * For this many cycle times after it last took up an op, a rank still waiting for others starts its next
     * cycle at once instead of sleeping out the cycle time. The usual reason an op was not ready everywhere is
     * that another rank submitted it a moment after this rank's cycle began; that rank's submission wakes its
     * engine at once, and without this the two would meet only when this rank's sleep ends (up to
     * KOLO_CYCLE_TIME later). The early cycle just
     * blocks in the transport until the other rank arrives, so it costs no CPU unless every rank is waiting
     * for something different; the window bounds that case.
     */
    private static final long EAGER_CYCLES = 5;
    /**
     * After a cycle that ran ops, the engine polls its queue this long (yielding, so that on a machine with fewer
     * cores than busy threads the caller it just woke gets the CPU) before it sleeps: a training loop usually
     * submits its next op within microseconds, and a sleeping thread takes tens of microseconds to wake.
     */
    private static final long BUSY_POLL_NANOS = TimeUnit.MICROSECONDS.toNanos(50);
    /**
     * After this long with nothing of its own to do, a rank's engine thread stretches its cycle towards
     * {@link #IDLE_CYCLE_NANOS}. An idle cycle only tells the others "nothing here"; an op cannot complete before
     * every rank has submitted it, and a submission wakes its own rank's engine at once, so a long idle cycle
     * delays nothing that could have run. It gives back the CPU an idle job spent negotiating every
     * KOLO_CYCLE_TIME (measured ~9 % of a core per rank at 1 ms): on a training rank that is compute time.
     */
    private static final long IDLE_AFTER_NANOS = TimeUnit.MILLISECONDS.toNanos(100);
    private static final long IDLE_CYCLE_NANOS = TimeUnit.MILLISECONDS.toNanos(20);
    /** How long the engine thread stays out of the way after a caller last drove cycles, at least. */
    private static final long MIN_DRIVEN_NANOS = TimeUnit.MILLISECONDS.toNanos(1);
    /** The engine thread's sleep while callers drive its cycles. */
    private static final long DRIVEN_PARK_NANOS = TimeUnit.MILLISECONDS.toNanos(20);
    /** How often a caller waiting for the cycle lock checks whether its op is done meanwhile. */
    private static final long LOCK_POLL_NANOS = TimeUnit.MICROSECONDS.toNanos(20);
    /**
     * Tensors this large in a fused response are reduced where they lie, each with a collective call of its own.
     * On CPUs the copy into the fusion buffer and back runs at memory speed, like the transfer itself: averaging
     * ResNet-18's 44.7 MB of gradients at np=2 spent 18-27 ms per step copying beside 33-37 ms reducing (timeline,
     * 2-vCPU VM), while an extra call costs microseconds over shared memory and a ring's latency (about 0.1 ms per
     * step between hosts) over TCP, both small beside copying 2 MiB.
     */
    static final long IN_PLACE_MIN_BYTES = 1L << 20;
    /** Names whose in-flight slot is kept between ops, at least (see {@link InFlightNames}). */
    private static final int KEPT_NAMES = 4096;
    private static final int F_NOTHING_NEW = 1;
    private static final int F_NO_SHUTDOWN = 2;
    private static final int F_NOT_JOINED = 4;
    private static final int F_ALL_VALID = 8;
    private static final int F_TABLE_EMPTY = 16;

    /** Turns a transport-level failure into the exception users see (naming the failed rank and cause). */
    @FunctionalInterface
    public interface FailureExplainer {
        RuntimeException explain(RuntimeException failure);
    }

    private final CollectiveOps ops;
    private final int rank;
    private final int size;
    private final EngineSettings settings;
    private final FailureExplainer explainer;
    private final Thread thread;
    private final SubmissionQueue queue = new SubmissionQueue();
    private final InFlightNames inFlight;
    private final Map<OpKind, AtomicLong> unnamed = new EnumMap<>(OpKind.class);
    private volatile RuntimeException fatal;
    private volatile boolean shutdownRequested;
    private volatile boolean terminated;
    /** Held by whichever thread runs a cycle: the engine thread, or a caller driving cycles while it waits. */
    private final ReentrantLock cycleLock = new ReentrantLock();
    private final AtomicInteger drivers = new AtomicInteger();
    private volatile long lastDriveNanos;
    /** The ranks agreed to shut down, or a cycle failed: no thread runs another cycle. */
    private volatile boolean finished;
    private final long cycleNanos;

    // State below is touched only by the thread that holds cycleLock.
    private final PendingOps pending = new PendingOps();
    private final List<Op> toSend = new ArrayList<>();
    private final ResponseCache cache;
    private final ParkedOps parked;
    /** Positions whose cached response does not answer this rank's new request; cleared every cycle. */
    private final boolean[] invalidLocal;
    private int invalidCount;
    private final MessageTable table;
    private final Arena bitsArena = Arena.ofShared();
    private final MemorySegment bits;
    private final int cacheWords;
    private final Scratch fusion = new Scratch();
    private final Scratch scratch = new Scratch();
    private final Timeline timeline;
    private Op joinOp;
    private long lastDrainNanos;
    /** When the current (or last) cycle began. */
    private long cycleStartNanos;
    /** When this rank last had an op of its own in the engine (engine thread only). */
    private long lastBusyNanos = System.nanoTime();
    private long completedAtLastPause;
    /** Reused every cycle so that an idle engine cycling every millisecond makes no garbage. */
    private final List<Response> fromCache = new ArrayList<>();
    private final List<Response> toExecute = new ArrayList<>();
    /** The coordinator's latest word on long-waiting ops (see {@link #waitingFor}); read by waiting callers. */
    private volatile Map<String, String> waitingFor = Map.of();
    private volatile long coordinatorRounds;
    private volatile long cachedOps;
    private volatile long fusedBuffers;
    private volatile long completedOps;
    private volatile long eagerOps;

    public Engine(CollectiveOps ops, EngineSettings settings, FailureExplainer explainer) {
        this.ops = ops;
        this.rank = ops.rank();
        this.size = ops.size();
        this.settings = settings;
        this.explainer = explainer;
        this.cycleNanos = Math.max(0, settings.cycleTime().toNanos());
        this.lastDriveNanos = System.nanoTime() - TimeUnit.DAYS.toNanos(1);
        this.cache = new ResponseCache(settings.cacheCapacity(), settings.eagerAllreduceBytes());
        this.inFlight = new InFlightNames(Math.max(KEPT_NAMES, settings.cacheCapacity()));
        this.parked = new ParkedOps(settings.cacheCapacity());
        this.invalidLocal = new boolean[settings.cacheCapacity()];
        this.cacheWords = (settings.cacheCapacity() + 63) / 64;
        this.bits = bitsArena.allocate(8L * (1 + 2L * cacheWords) + settings.eagerAllreduceBytes(), 8);
        this.table = rank == 0 ? new MessageTable(size) : null;
        this.timeline = rank == 0 && settings.timeline() != null ? Timeline.open(settings.timeline()) : null;
        for (OpKind k : OpKind.values()) {
            unnamed.put(k, new AtomicLong());
        }
        this.thread = Thread.ofPlatform().daemon().name("kolo-engine-" + rank).unstarted(this::run);
        thread.start();
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
        if (op.name == null) {
            op.name = op.kind.label() + ".noname." + unnamed.get(op.kind).incrementAndGet();
            op.generatedName = true;
        }
        checkUsable();
        if (!op.input.isAccessibleBy(thread)) {
            throw new IllegalArgumentException("'" + op.name + "': the tensor's memory is confined to one thread and"
                    + " Kolo's engine thread cannot read it; allocate it from Arena.ofShared(), Arena.ofAuto() or Arena.global()");
        }
        op.slot = inFlight.claim(op.name);
        if (op.slot == null) {
            throw new IllegalArgumentException("a collective named '" + op.name + "' is already in flight on rank "
                    + rank + "; wait for it to finish or give the new one another name");
        }
        try {
            // Built here, on the caller's thread, so that the engine's per-op path allocates nothing.
            op.request(rank);
        } catch (RuntimeException e) {
            release(op);
            throw e;
        }
        op.submittedNanos = System.nanoTime();
        queue.add(op);
        if (terminated) {
            // The engine ended after checkUsable(): its last failQueued() may have run before our add.
            failQueued();
        } else if (!driven(op.submittedNanos)) {
            // Cut the engine's between-cycle sleep short: otherwise a new op waits out the rest of the cycle
            // (up to KOLO_CYCLE_TIME) before negotiation even starts, and it waits again on every rank, which
            // measured as ~0.6 ms of the ~2.4 ms 4 KiB np=2 allreduce latency. Ops submitted while a cycle is
            // running still queue up and are fused together in the next one. While a caller drives this rank's
            // cycles it takes the op up itself, and waking the engine thread would only contend with it.
            LockSupport.unpark(thread);
        }
    }

    private void checkUsable() {
        RuntimeException f = fatal;
        if (f != null) {
            throw copy(f, "cannot start a new collective");
        }
        if (shutdownRequested || terminated) {
            throw new KoloException("Kolo has been shut down on rank " + rank + "; call Kolo.init() again to start a new job");
        }
    }

    /** Counters since start (updated by the engine thread, read from any). */
    public EngineStats stats() {
        return new EngineStats(coordinatorRounds, cachedOps, fusedBuffers, completedOps, eagerOps);
    }

    /** The first fatal error, if the engine has failed. */
    public RuntimeException failure() {
        return fatal;
    }

    /** Stops the engine on every rank (the others see it at their next cycle) and waits for this rank's thread. */
    public void shutdown() {
        shutdownRequested = true;
        LockSupport.unpark(thread);
        try {
            thread.join(settings.timeout().toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (thread.isAlive()) {
            LOG.log(System.Logger.Level.WARNING, "rank " + rank + ": engine did not stop within KOLO_TIMEOUT_SECONDS");
        }
    }

    @Override
    public void close() {
        shutdown();
    }

    /**
     * Runs this rank's cycles on the calling thread until {@code done} or the deadline, instead of waiting for the
     * engine thread to run them and wake the caller. A blocking collective then costs no hand-off between threads
     * on this rank (each is a futex wake, tens of microseconds on a busy machine): the caller negotiates, moves the
     * data and returns. Cycles are the same whichever thread runs them, so ranks where the engine thread cycles
     * and ranks where a caller does meet as usual. Returns early, without error, when the engine stops or fails;
     * the caller then learns the outcome from its handle.
     *
     * @param nowNanos      the caller's {@link System#nanoTime()} of a moment ago (it computed the deadline from it)
     * @param deadlineNanos when to give up driving, in {@link System#nanoTime()} terms
     */
    public void drive(BooleanSupplier done, long nowNanos, long deadlineNanos) {
        Thread me = Thread.currentThread();
        // The engine's own callbacks must not recurse into cycles; a virtual thread would pin its carrier.
        if (me == thread || me.isVirtual() || done.getAsBoolean()) {
            return;
        }
        drivers.incrementAndGet();
        try {
            // Clock reads are kept to what pacing and the deadline need: an eager op finishes in its first cycle.
            long now = nowNanos;
            while (!done.getAsBoolean() && !finished && deadlineNanos - now > 0) {
                if (!cycleLock.tryLock()) {
                    // The engine thread is finishing a cycle, or another caller drives: its cycles run our op too.
                    LockSupport.parkNanos(LOCK_POLL_NANOS);
                    now = System.nanoTime();
                    continue;
                }
                boolean leftWork = true;
                try {
                    driveCycles(done, now, deadlineNanos);
                    leftWork = waiting() || !queue.isEmpty();
                } finally {
                    lastDriveNanos = System.nanoTime();
                    cycleLock.unlock();
                }
                if (leftWork) {
                    LockSupport.unpark(thread);
                }
                if (!done.getAsBoolean()) {
                    now = System.nanoTime();
                }
            }
        } finally {
            drivers.decrementAndGet();
        }
    }

    /** Cycles until {@code done}, the engine ends or the deadline passes. */
    private void driveCycles(BooleanSupplier done, long nowNanos, long deadlineNanos) {
        long now = nowNanos;
        while (!finished && !done.getAsBoolean()) {
            if (now - deadlineNanos > 0) {
                return;
            }
            runCycle();
            if (finished || done.getAsBoolean()) {
                return;
            }
            // Not done: another rank has not submitted it yet. Pace like the engine thread would.
            now = System.nanoTime();
            long rest = cycleNanos - (now - cycleStartNanos);
            if (shouldPause(rest, now)) {
                LockSupport.parkNanos(Math.min(rest, deadlineNanos - now));
                now = System.nanoTime();
            }
        }
    }

    /** Whether to sleep out {@code rest} before the next cycle, rather than start it at once (see EAGER_CYCLES). */
    private boolean shouldPause(long rest, long now) {
        return rest > 0 && !(waiting() && now - lastDrainNanos < EAGER_CYCLES * cycleNanos);
    }

    /** True while a caller runs cycles, or did within the last cycle time (before {@code now}) and so will likely again. */
    private boolean driven(long now) {
        return drivers.get() > 0 || now - lastDriveNanos < Math.max(cycleNanos, MIN_DRIVEN_NANOS);
    }

    /** One cycle under the lock's protection; a failure or an agreed shutdown ends the engine for every thread. */
    private void runCycle() {
        try {
            if (cycle()) {
                finished = true;
            }
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
        if (timeline != null) {
            timeline.flush();
        }
        if (finished && Thread.currentThread() != thread) {
            LockSupport.unpark(thread);
        }
    }

    private void run() {
        try {
            while (!finished) {
                if (driven(System.nanoTime())) {
                    // A caller runs this rank's cycles itself: stay out of its way. Waking every cycle time would
                    // take the CPU from it on a crowded host; a caller that leaves work behind, a submission
                    // nobody drives, and shutdown wake us at once.
                    LockSupport.parkNanos(DRIVEN_PARK_NANOS);
                    continue;
                }
                long start = System.nanoTime();
                cycleLock.lock();
                try {
                    if (!finished) {
                        runCycle();
                    }
                } finally {
                    cycleLock.unlock();
                }
                if (finished) {
                    break;
                }
                long now = System.nanoTime();
                if (waiting() || lastDrainNanos - start >= 0) {
                    lastBusyNanos = now;
                } else if (lastDriveNanos - lastBusyNanos > 0) {
                    lastBusyNanos = lastDriveNanos;   // a caller ran cycles for its own op meanwhile
                }
                long period = now - lastBusyNanos < IDLE_AFTER_NANOS ? cycleNanos
                        : Math.max(cycleNanos, Math.min(IDLE_CYCLE_NANOS, (now - lastBusyNanos) / 8));
                long rest = period - (now - start);
                if (shouldPause(rest, now)) {
                    pause(start, period, now);
                }
            }
        } finally {
            cycleLock.lock();
            try {
                if (fatal == null) {
                    failAll(new KoloException("Kolo was shut down before this op completed (a rank called shutdown)"));
                }
                terminated = true;
                failQueued();
                if (timeline != null) {
                    timeline.close();
                }
                fusion.close();
                scratch.close();
                bitsArena.close();
            } finally {
                cycleLock.unlock();
            }
        }
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
        int words = (high + 63) / 64;
        for (int p = parked.next(0); p >= 0; p = parked.next(p + 1)) {
            if (now - parked.get(p).submittedNanos > CACHE_GRACE_NANOS) {
                toSend.add(parked.remove(p));
            }
        }
        long flags = 0;
        boolean anyInvalidLocal = invalidCount > 0;
        if (toSend.isEmpty()) {
            flags |= F_NOTHING_NEW;
        }
        if (!shutdownRequested) {
            flags |= F_NO_SHUTDOWN;
        }
        if (joinOp == null) {
            flags |= F_NOT_JOINED;
        }
        if (!anyInvalidLocal) {
            flags |= F_ALL_VALID;
        }
        if (table == null || table.isEmpty()) {
            flags |= F_TABLE_EMPTY;
        }
        bits.setAtIndex(ValueLayout.JAVA_LONG, 0, flags);
        for (int w = 0; w < words; w++) {
            // Positions at or above the high-water mark hold nothing: not ready, but valid.
            long valid = w < words - 1 || high % 64 == 0 ? -1L : (1L << (high % 64)) - 1;
            if (anyInvalidLocal) {
                for (int b = 0; b < 64 && w * 64 + b < high; b++) {
                    if (invalidLocal[w * 64 + b]) {
                        valid &= ~(1L << b);
                    }
                }
            }
            bits.setAtIndex(ValueLayout.JAVA_LONG, 1 + w, parked.word(w));
            bits.setAtIndex(ValueLayout.JAVA_LONG, 1 + words + w, valid);
        }
        int eager = eagerPosition();
        long payloadAt = 8L * (1 + 2L * words);
        Op eagerOp = eager >= 0 ? parked.get(eager) : null;
        if (eager < 0) {
            ops.allreduce(bits, 1 + 2L * words, DataType.INT64, Reduction.BAND);
        } else {
            Response r = cache.get(eager);
            if (eagerOp != null) {
                MemorySegment.copy(eagerOp.input, 0, bits, payloadAt, r.totalBytes());
                if (r.prescale() != 1.0) {
                    Kernels.scale(bits, payloadAt, r.totalElements(), r.type(), r.prescale());
                }
            }
            ops.allreducePair(bits, 1 + 2L * words, DataType.INT64, Reduction.BAND,
                    r.totalElements(), r.type(), reduction(r.op()));
        }
        if (anyInvalidLocal) {
            java.util.Arrays.fill(invalidLocal, 0, high, false);
            invalidCount = 0;
        }

        long agreed = bits.getAtIndex(ValueLayout.JAVA_LONG, 0);
        boolean anyNew = (agreed & F_NOTHING_NEW) == 0;
        boolean anyShutdown = (agreed & F_NO_SHUTDOWN) == 0;
        boolean anyJoined = (agreed & F_NOT_JOINED) == 0;
        boolean anyInvalid = (agreed & F_ALL_VALID) == 0;
        boolean tableBusy = (agreed & F_TABLE_EMPTY) == 0;
        if (eagerOp != null && !anyJoined && agreedBit(1, eager) && agreedBit(1 + words, eager)) {
            parked.remove(eager);
            cachedOps++;
            eagerOps++;
            finishEager(cache.get(eager), payloadAt);
        }

        if (anyInvalid) {
            for (int p = 0; p < high; p++) {
                if (!agreedBit(1 + words, p)) {
                    cache.erase(p);
                    Op op = parked.remove(p);
                    if (op != null) {
                        toSend.add(op);
                    }
                }
            }
        }
        fromCache.clear();
        toExecute.clear();
        for (int p = parked.next(0); p >= 0; p = parked.next(p + 1)) {
            if (anyJoined) {
                // A joined rank has no cache bits; let the coordinator account for its zeros.
                toSend.add(parked.remove(p));
            } else if (agreedBit(1, p)) {
                Response r = cache.get(p);
                fromCache.add(r);
                parked.remove(p);
                cachedOps++;
                // A repeat: likely to come again. Fresh names (unnamed ops get a new one each time) never displace it.
                cache.markRepeated(p);
            }
        }
        fuse(fromCache, toExecute);
        if (anyNew || anyInvalid || anyJoined || tableBusy) {
            toExecute.addAll(coordinate());
        }
        if (timeline != null && settings.markCycles() && !toExecute.isEmpty()) {
            timeline.cycleStart();
        }
        for (int i = 0; i < toExecute.size(); i++) {
            execute(toExecute.get(i));
        }
        revalidateCached();
        return anyShutdown;
    }

    /** Bit {@code p} of the agreed bit vector's part that starts at word {@code firstWord}. */
    private boolean agreedBit(int firstWord, int p) {
        return (bits.getAtIndex(ValueLayout.JAVA_LONG, firstWord + p / 64) & (1L << (p % 64))) != 0;
    }

    /**
     * The cache position of this cycle's eager op, or -1. Depends only on state every rank shares, and the cache drops
     * the mark when the entry changes, so the payload always fits the space reserved for it after the bit vector.
     */
    private int eagerPosition() {
        return cache.repeated();
    }

    /** The eager op's payload was reduced with the bit vector and every rank's was real: finish it from there. */
    private void finishEager(Response r, long payloadAt) {
        long negotiated = clock();
        Op op = pending.get(r.names().getFirst());
        finishReduction(bits, payloadAt, r.totalElements(), r);
        MemorySegment.copy(bits, payloadAt, op.input, 0, r.totalBytes());
        long done = clock();
        trace(r, negotiated, negotiated, negotiated, done, true);
        finish(r, negotiated, done);
        cache.put(r);
    }

    /** Sleeps out the rest of the cycle unless an op is submitted first (which unparks this thread). */
    private void pause(long cycleStart, long cycleNanos, long now) {
        if (completedOps != completedAtLastPause) {
            completedAtLastPause = completedOps;
            long pollEnd = now + Math.min(BUSY_POLL_NANOS, cycleNanos - (now - cycleStart));
            while (queue.isEmpty() && System.nanoTime() - pollEnd < 0) {
                Thread.yield();
            }
        }
        long rest = cycleNanos - (System.nanoTime() - cycleStart);
        if (queue.isEmpty() && rest > 0) {
            LockSupport.parkNanos(rest);
        }
    }

    /** Does this rank have ops that are not done yet (so its next cycle may be the one that runs them)? */
    private boolean waiting() {
        return !pending.isEmpty() || joinOp != null || !toSend.isEmpty();
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
            int p = cache.position(op.name);
            if (p >= 0 && cache.get(p).answers(op.request(rank)) && parked.get(p) == null) {
                parked.park(p, op);
            } else {
                if (p >= 0 && !invalidLocal[p]) {
                    invalidLocal[p] = true;
                    invalidCount++;
                }
                toSend.add(op);
            }
        }
    }

    /** After the cache changed, ops parked on a position that now holds something else go the slow way. */
    private void revalidateCached() {
        for (int p = parked.next(0); p >= 0; p = parked.next(p + 1)) {
            Op op = parked.get(p);
            if (cache.position(op.name) != p || !cache.get(p).answers(op.request(rank))) {
                toSend.add(parked.remove(p));
            }
        }
    }

    /** The coordinator round: requests to rank 0, responses back to everyone. */
    private List<Response> coordinate() {
        coordinatorRounds++;
        List<Request> mine = new ArrayList<>(toSend.size());
        for (Op op : toSend) {
            mine.add(op.request(rank));
        }
        toSend.clear();
        byte[][] all = ops.gather(encode(mine, Request::write), 0);
        byte[] answer = null;
        if (rank == 0) {
            List<Response> out = new ArrayList<>();
            for (byte[] b : all) {
                table.add(decode(b, Request::read), out);
            }
            table.inspectStalls(settings.stallCheckTime().toNanos(), settings.stallShutdownTime().toNanos(), out);
            fuse(table.takeReady(), out);
            answer = CoordinatorAnswer.encode(out, table.takeWaitingFor());
        }
        return CoordinatorAnswer.decode(ops.broadcast(answer, 0), w -> waitingFor = w);
    }

    /**
     * What the op named {@code name} was still waiting for when rank 0 last looked (it tells every rank about ops that
     * have waited a while): "rank 2 had not submitted it after 19 s (ranks 0, 1 and 3 had)", or null.
     */
    public String waitingFor(String name) {
        return waitingFor.get(name);
    }

    /**
     * Appends {@code singles} to {@code out}, merging consecutive compatible allreduces into buffers of at most
     * the fusion threshold; members of one group always fuse.
     */
    private void fuse(List<Response> singles, List<Response> out) {
        Response current = null;
        String currentGroup = null;
        for (int i = 0; i < singles.size(); i++) {
            Response r = singles.get(i);
            String group = groupOf(r);
            boolean sameGroup = group != null && group.equals(currentGroup);
            if (current != null && current.fusableWith(r)
                    && (sameGroup || (group == null && currentGroup == null && settings.fusionThresholdBytes() > 0
                    && current.totalBytes() + r.totalBytes() <= settings.fusionThresholdBytes()))) {
                current = current.fuse(r);
                continue;
            }
            if (current != null) {
                out.add(current);
            }
            current = r;
            currentGroup = group;
        }
        if (current != null) {
            out.add(current);
        }
    }

    private String groupOf(Response r) {
        Op op = r.names().isEmpty() ? null : pending.get(r.names().getFirst());
        return op == null ? null : op.group;
    }

    private void execute(Response r) {
        long negotiated = clock();
        if (r.isError()) {
            for (int i = 0; i < r.names().size(); i++) {
                Op op = pending.remove(r.names().get(i));
                if (op != null) {
                    // The op may also be parked on a cache slot or queued for the coordinator; it is over now.
                    toSend.remove(op);
                    parked.remove(op);
                    fail(op, new KoloException(r.error()));
                }
            }
            return;
        }
        if (r.names().size() > 1) {
            fusedBuffers++;
        }
        switch (r.kind()) {
            case ALLREDUCE -> allreduce(r, negotiated);
            case BROADCAST -> broadcast(r, negotiated);
            case ALLGATHER -> allgather(r, negotiated);
            case ALLTOALL -> alltoall(r, negotiated);
            case REDUCESCATTER -> reducescatter(r, negotiated);
            case BARRIER -> {
                ops.barrier();
                finish(r, negotiated, negotiated);
            }
            case JOIN -> {
                if (joinOp != null) {
                    Op op = joinOp;
                    joinOp = null;
                    op.setLastJoined(r.lastJoined());
                    release(op);
                    notifyCompleted(op);
                }
            }
        }
        for (int i = 0; i < r.names().size(); i++) {
            cache.put(part(r, i));
        }
    }

    private static Response part(Response r, int i) {
        if (r.names().size() == 1) {
            return r;
        }
        return new Response(r.kind(), List.of(r.names().get(i)), r.type(), r.op(), r.prescale(), r.postscale(),
                r.root(), new long[][]{r.shapes()[i]}, r.perRank(), r.joined(), null, -1);
    }

    private void allreduce(Response r, long negotiated) {
        int es = r.type().byteSize();
        int n = r.names().size();
        // Which tensors go through the fusion buffer follows from the response alone, so every rank makes the same
        // collective calls in the same order (a joined rank, with no tensors, too).
        long packed = 0;
        for (int i = 0; i < n; i++) {
            long bytes = Shapes.elements(r.shapes()[i]) * es;
            packed += inPlace(n, bytes) ? 0 : bytes;
        }
        long t0 = clock();
        MemorySegment buf = packed > 0 ? fusion.get(packed) : null;
        if (buf != null) {
            copyPacked(r, buf, true);
        }
        long t1 = clock();
        if (buf != null) {
            reduce(buf, packed / es, r);
        }
        for (int i = 0; i < n; i++) {
            long bytes = Shapes.elements(r.shapes()[i]) * es;
            if (inPlace(n, bytes)) {
                reduceWhereItLies(pending.get(r.names().get(i)), bytes, r);
            }
        }
        long t2 = clock();
        if (buf != null) {
            copyPacked(r, buf, false);
        }
        trace(r, negotiated, t0, t1, t2, buf == null);
        finish(r, negotiated, t2);
    }

    /**
     * Copies the tensors of {@code r} that travel through the fusion buffer into {@code buf}, one after the other
     * (zeros for a rank without them, i.e. joined), or with {@code in} false back out of it.
     */
    private void copyPacked(Response r, MemorySegment buf, boolean in) {
        int es = r.type().byteSize();
        int n = r.names().size();
        long off = 0;
        for (int i = 0; i < n; i++) {
            long bytes = Shapes.elements(r.shapes()[i]) * es;
            if (inPlace(n, bytes)) {
                continue;
            }
            Op op = pending.get(r.names().get(i));
            if (op == null) {
                if (in) {
                    buf.asSlice(off, bytes).fill((byte) 0);
                }
            } else if (in) {
                MemorySegment.copy(op.input, 0, buf, off, bytes);
            } else {
                MemorySegment.copy(buf, off, op.input, 0, bytes);
            }
            off += bytes;
        }
    }

    /**
     * Whether a tensor of a response with {@code names} tensors is reduced where it lies rather than in the fusion
     * buffer: a tensor alone in its response, or one of at least {@link #IN_PLACE_MIN_BYTES}. Copying such a tensor
     * into the buffer and back costs more than the collective call of its own that it saves.
     */
    private static boolean inPlace(int names, long bytes) {
        return names == 1 || bytes >= IN_PLACE_MIN_BYTES;
    }

    /** Prescale, reduction across the ranks, and AVERAGE/postscale, on {@code count} elements of {@code buf}. */
    private void reduce(MemorySegment buf, long count, Response r) {
        if (r.prescale() != 1.0) {
            Kernels.scale(buf, 0, count, r.type(), r.prescale());
        }
        ops.allreduce(buf, count, r.type(), reduction(r.op()));
        finishReduction(buf, 0, count, r);
    }

    /**
     * Reduces one tensor in its own memory (heap or native: every transport takes both). A rank without it (joined)
     * contributes zeros from the scratch buffer: the fusion buffer may hold the response's other tensors meanwhile.
     */
    private void reduceWhereItLies(Op op, long bytes, Response r) {
        long count = bytes / r.type().byteSize();
        if (op != null && op.input.byteSize() == bytes) {
            reduce(op.input, count, r);
            return;
        }
        MemorySegment buf = scratch.get(bytes);
        if (op != null) {
            MemorySegment.copy(op.input, 0, buf, 0, bytes);
        } else {
            buf.asSlice(0, bytes).fill((byte) 0);
        }
        reduce(buf, count, r);
        if (op != null) {
            MemorySegment.copy(buf, 0, op.input, 0, bytes);
        }
    }

    private void broadcast(Response r, long negotiated) {
        String name = r.names().getFirst();
        Op op = pending.get(name);
        long bytes = Shapes.elements(r.shapes()[0]) * r.type().byteSize();
        boolean direct = op != null && op.input.byteSize() == bytes;
        long t0 = clock();
        MemorySegment buf = direct ? op.input : fusion.get(bytes);
        if (!direct && op != null && rank == r.root()) {
            MemorySegment.copy(op.input, 0, buf, 0, bytes);
        }
        long t1 = clock();
        ops.broadcast(buf, bytes, r.root());
        long t2 = clock();
        if (!direct && op != null && rank != r.root()) {
            MemorySegment.copy(buf, 0, op.input, 0, bytes);
        }
        trace(r, negotiated, t0, t1, t2, direct);
        finish(r, negotiated, t2);
    }

    private void allgather(Response r, long negotiated) {
        Op op = pending.get(r.names().getFirst());
        long rowBytes = Shapes.rowElements(r.shapes()[0]) * r.type().byteSize();
        long[] blockBytes = new long[size];
        long total = 0;
        long mineAt = 0;
        long rows = 0;
        for (int p = 0; p < size; p++) {
            if (p == rank) {
                mineAt = total;
            }
            blockBytes[p] = r.perRank()[p][0] * rowBytes;
            total += blockBytes[p];
            rows += r.perRank()[p][0];
        }
        long t0 = clock();
        MemorySegment buf = fusion.get(total);
        if (op != null && blockBytes[rank] > 0) {
            MemorySegment.copy(op.input, 0, buf, mineAt, blockBytes[rank]);
        }
        long t1 = clock();
        ops.allgatherv(buf, blockBytes);
        long t2 = clock();
        if (op != null) {
            deliver(op, Shapes.withFirstDim(op.shape, rows), buf, 0, total);
        }
        trace(r, negotiated, t0, t1, t2, false);
        finish(r, negotiated, t2);
    }

    private void alltoall(Response r, long negotiated) {
        Op op = pending.get(r.names().getFirst());
        long rowBytes = Shapes.rowElements(r.shapes()[0]) * r.type().byteSize();
        long[] sendBytes = new long[size];
        long[] recvBytes = new long[size];
        long[] received = new long[size];
        long sendTotal = 0;
        long recvTotal = 0;
        for (int p = 0; p < size; p++) {
            sendBytes[p] = r.perRank()[rank][p] * rowBytes;
            received[p] = r.perRank()[p][rank];
            recvBytes[p] = received[p] * rowBytes;
            sendTotal += sendBytes[p];
            recvTotal += recvBytes[p];
        }
        long t0 = clock();
        MemorySegment send;
        if (op.input.isNative()) {
            send = op.input;
        } else {
            send = scratch.get(sendTotal);
            MemorySegment.copy(op.input, 0, send, 0, sendTotal);
        }
        MemorySegment recv = fusion.get(recvTotal);
        long t1 = clock();
        ops.alltoallv(send, sendBytes, recv, recvBytes);
        long t2 = clock();
        long rows = 0;
        for (long v : received) {
            rows += v;
        }
        if (deliver(op, Shapes.withFirstDim(op.shape, rows), recv, 0, recvTotal)) {
            op.setReceivedSplits(received);
        }
        trace(r, negotiated, t0, t1, t2, false);
        finish(r, negotiated, t2);
    }

    private void reducescatter(Response r, long negotiated) {
        Op op = pending.get(r.names().getFirst());
        long[] shape = r.shapes()[0];
        long rows = shape[0];
        long rowElems = Shapes.rowElements(shape);
        int es = r.type().byteSize();
        long[] counts = new long[size];
        long mineAt = 0;
        for (int p = 0; p < size; p++) {
            long blockRows = rows / size + (p < rows % size ? 1 : 0);
            counts[p] = blockRows * rowElems;
            if (p < rank) {
                mineAt += counts[p];
            }
        }
        long total = Shapes.elements(shape);
        long t0 = clock();
        MemorySegment buf = fusion.get(total * es);
        MemorySegment.copy(op.input, 0, buf, 0, total * es);
        long t1 = clock();
        if (r.prescale() != 1.0) {
            Kernels.scale(buf, 0, total, r.type(), r.prescale());
        }
        ops.reducescatter(buf, counts, r.type(), reduction(r.op()));
        finishReduction(buf, mineAt * es, counts[rank], r);
        long t2 = clock();
        long[] outShape = Shapes.withFirstDim(shape, counts[rank] / Math.max(1, rowElems));
        if (rowElems == 0) {
            outShape[0] = rows / size + (rank < rows % size ? 1 : 0);
        }
        deliver(op, outShape, buf, mineAt * es, counts[rank] * es);
        trace(r, negotiated, t0, t1, t2, false);
        finish(r, negotiated, t2);
    }

    /**
     * Gives {@code op} memory of {@code shape} holding {@code bytes} of {@code from} at {@code offset}. The collective
     * already ran on every rank, so a failure here (the result does not fit a Java array, or memory ran out) is this
     * op's alone: it fails the op on this rank, naming why, and the engine and the other ranks go on.
     *
     * @return whether the op got its result
     */
    private boolean deliver(Op op, long[] shape, MemorySegment from, long offset, long bytes) {
        try {
            MemorySegment out = op.outputs.allocate(shape);
            MemorySegment.copy(from, offset, out, 0, bytes);
            op.setResult(shape, out);
            return true;
        } catch (RuntimeException | OutOfMemoryError e) {
            pending.remove(op.name);
            fail(op, new KoloException(op.kind.label() + " '" + op.name + "' ran, but rank " + rank
                    + " could not hold its result of shape " + java.util.Arrays.toString(shape) + ": " + e));
            return false;
        }
    }

    /** AVERAGE's division (exact on integer types) and the postscale factor, after the reduction. */
    private void finishReduction(MemorySegment buf, long offset, long count, Response r) {
        double post = r.postscale();
        if (r.op() == ReduceOp.AVERAGE) {
            if (r.type().isInteger()) {
                Kernels.divide(buf, offset, count, r.type(), size);
            } else {
                post /= size;
            }
        }
        if (post != 1.0) {
            Kernels.scale(buf, offset, count, r.type(), post);
        }
    }

    private static Reduction reduction(ReduceOp op) {
        return switch (op) {
            case SUM, AVERAGE -> Reduction.SUM;
            case MIN -> Reduction.MIN;
            case MAX -> Reduction.MAX;
            case PRODUCT -> Reduction.PRODUCT;
        };
    }

    /**
     * The time for the timeline's spans, 0 without a timeline: a clock read costs ~37 ns on the 2-vCPU VM, and an
     * eager 1 KiB allreduce made eleven of them, a quarter of the engine's own time per op.
     */
    private long clock() {
        return timeline == null ? 0 : System.nanoTime();
    }

    private void trace(Response r, long negotiated, long t0, long t1, long t2, boolean direct) {
        if (timeline == null) {
            return;
        }
        long end = System.nanoTime();
        String kind = r.kind().name();
        String args = "\"dtype\":\"" + r.type() + "\",\"bytes\":" + r.totalBytes() + ",\"fused\":" + r.names().size();
        for (String name : r.names()) {
            Op op = pending.get(name);
            if (op != null) {
                // QUEUE: waiting for this rank's next engine cycle; NEGOTIATE: waiting for the other ranks to agree.
                timeline.span(name, "QUEUE", timeline.micros(op.submittedNanos), timeline.micros(op.drainedNanos), null);
            }
            long drained = op == null ? negotiated : op.drainedNanos;
            timeline.span(name, "NEGOTIATE_" + kind, timeline.micros(drained), timeline.micros(negotiated), null);
            if (!direct) {
                timeline.span(name, "MEMCPY_IN_FUSION_BUFFER", timeline.micros(t0), timeline.micros(t1), null);
            }
            timeline.span(name, kind, timeline.micros(t1), timeline.micros(t2), args);
            if (!direct && t2 < end) {
                timeline.span(name, "MEMCPY_OUT_FUSION_BUFFER", timeline.micros(t2), timeline.micros(end), null);
            }
        }
    }

    private void finish(Response r, long negotiated, long done) {
        for (int i = 0; i < r.names().size(); i++) {
            Op op = pending.remove(r.names().get(i));
            if (op != null) {
                release(op);
                completedOps++;
                notifyCompleted(op);
            }
        }
    }

    private void notifyCompleted(Op op) {
        try {
            op.listener.completed(op);
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "completion callback of '" + op.name + "' threw", e);
        }
    }

    /** Frees the op's name for the next op of that name; before its listener runs, which may submit that op. */
    private void release(Op op) {
        inFlight.release(op.slot, !op.generatedName);
    }

    private void fail(Op op, RuntimeException error) {
        release(op);
        try {
            op.listener.failed(op, error);
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "failure callback of '" + op.name + "' threw", e);
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
        for (Op op : all) {
            fail(op, copy(error, op.kind.label() + " '" + op.name + "' failed"));
        }
        failQueued();
    }

    private void failQueued() {
        RuntimeException f = fatal != null ? fatal
                : new KoloException("Kolo was shut down before this op completed (a rank called shutdown)");
        for (Op op = queue.takeAll(), next; op != null; op = next) {
            next = SubmissionQueue.detach(op);
            fail(op, copy(f, op.kind.label() + " '" + op.name + "' failed"));
        }
    }

    /** A fresh exception per op (so each has its own stack), keeping the type and failed rank. */
    private static RuntimeException copy(RuntimeException e, String context) {
        String message = context + ": " + e.getMessage();
        if (e instanceof RankFailedException rf) {
            return new RankFailedException(rf.failedRank(), message, e);
        }
        if (e instanceof io.kolo.KoloTimeoutException) {
            io.kolo.KoloTimeoutException t = new io.kolo.KoloTimeoutException(message);
            t.initCause(e);
            return t;
        }
        return new KoloException(message, e);
    }

    /** How one control message element is written; lets requests and responses share the framing below. */
    private interface Writer<T> {
        void write(T value, DataOutputStream out) throws IOException;
    }

    private interface Reader<T> {
        T read(DataInputStream in) throws IOException;
    }

    private static <T> byte[] encode(List<T> items, Writer<T> writer) {
        try {
            ByteArrayOutputStream bytes = new ByteArrayOutputStream();
            DataOutputStream out = new DataOutputStream(bytes);
            out.writeInt(items.size());
            for (T item : items) {
                writer.write(item, out);
            }
            out.flush();
            return bytes.toByteArray();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static <T> List<T> decode(byte[] data, Reader<T> reader) {
        try {
            DataInputStream in = new DataInputStream(new ByteArrayInputStream(data));
            int n = in.readInt();
            List<T> list = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                list.add(reader.read(in));
            }
            return list;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
