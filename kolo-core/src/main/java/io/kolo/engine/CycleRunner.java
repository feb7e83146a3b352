package io.kolo.engine;

import io.kolo.bootstrap.ThreadLimit;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;

/**
 * Runs an engine's cycles, as Agrona's {@code AgentRunner} and {@code AgentInvoker} in one: on its own thread, paced
 * by the cycle time and an {@link IdleStrategy}, or on the thread of a caller waiting for its op ({@link #drive}),
 * which then negotiates and moves the data itself instead of waiting to be woken. Cycles are the same whichever
 * thread runs them, so ranks where the engine thread cycles and ranks where a caller does meet as usual.
 */
final class CycleRunner {
    /**
     * For this many cycle times after it last took up an op, a rank still waiting for others starts its next cycle at
     * once instead of sleeping out the cycle time. The usual reason an op was not ready everywhere is that another
     * rank submitted it a moment after this rank's cycle began; that rank's submission wakes its engine at once, and
     * without this the two would meet only when this rank's sleep ends (up to KOLO_CYCLE_TIME later). The prompt
     * cycle just blocks in the transport until the other rank arrives, so it costs no CPU unless every rank is waiting
     * for something different; the window bounds that case.
     */
    private static final long PROMPT_CYCLES = 5;
    /**
     * After this long with nothing of its own to do, a rank's engine thread stretches its cycle towards
     * {@link #IDLE_CYCLE_NANOS}. An idle cycle only tells the others "nothing here"; an op cannot complete before every
     * rank has submitted it, and a submission wakes its own rank's engine at once, so a long idle cycle delays nothing
     * that could have run, and gives back the CPU an idle job would spend negotiating every KOLO_CYCLE_TIME.
     */
    private static final long IDLE_AFTER_NANOS = TimeUnit.MILLISECONDS.toNanos(100);
    private static final long IDLE_CYCLE_NANOS = TimeUnit.MILLISECONDS.toNanos(20);
    /** How long the engine thread stays out of the way after a caller last drove cycles, at least. */
    private static final long MIN_DRIVEN_NANOS = TimeUnit.MILLISECONDS.toNanos(1);
    /** The engine thread's sleep while callers drive its cycles. */
    private static final long DRIVEN_PARK_NANOS = TimeUnit.MILLISECONDS.toNanos(20);
    /**
     * How long a caller waiting for the cycle lock sleeps at most. The thread that runs the cycles wakes it when one of
     * them completes ops or when it gives the lock up ({@link LockWaiters}); this bound only covers an op ended
     * elsewhere (a failure outside the cycles). Waking on a short timer instead cost a rank's caller tens of thousands
     * of wake-ups a second, and a thousand ranks sharing a few cores spent much of their CPU on them.
     */
    private static final long LOCK_WAIT_NANOS = TimeUnit.MILLISECONDS.toNanos(20);
    /** A caller that finds every {@link LockWaiters} slot taken looks at its op this often instead. */
    private static final long LOCK_POLL_NANOS = TimeUnit.MICROSECONDS.toNanos(20);
    /** More threads of one rank than this seldom wait for their ops at once. */
    private static final int WAITER_SLOTS = 4;

    private final CycleAgent agent;
    private volatile long cycleNanos;
    private final IdleStrategy idle;
    private final Thread thread;
    /** Held by whichever thread runs a cycle: the runner's own, or a caller driving cycles while it waits. */
    private final ReentrantLock lock = new ReentrantLock();
    /** Callers asleep until the thread holding {@link #lock} completes ops or gives the lock up. */
    private final LockWaiters waiters = new LockWaiters(WAITER_SLOTS);
    private final AtomicInteger drivers = new AtomicInteger();
    /** When a caller last drove cycles: written with release stores (others only need to see it soon, not at once). */
    private final AtomicLong lastDriveNanos = new AtomicLong(System.nanoTime() - TimeUnit.DAYS.toNanos(1));
    /** The ranks agreed to shut down, or a cycle failed: no thread runs another cycle. */
    private volatile boolean finished;
    /** This rank asked to shut down: its thread cycles until the ranks agree, at most an idle cycle apart. */
    private volatile boolean stopping;
    /** When this rank last had an op of its own (runner thread only). */
    private long lastBusyNanos = System.nanoTime();
    private long completedAtLastIdle;
    private final BooleanSupplier workArrived;

    CycleRunner(String threadName, Duration cycleTime, IdleStrategy idle, CycleAgent agent) {
        this.agent = agent;
        this.cycleNanos = Math.max(0, cycleTime.toNanos());
        this.idle = idle;
        this.thread = Thread.ofPlatform().daemon().name(threadName).unstarted(this::run);
        this.workArrived = () -> !agent.queueEmpty();
    }

    void start() {
        ThreadLimit.start(thread, thread.getName() + "'s");
    }

    /** The runner's own thread (memory confined to another thread cannot be handed to the engine). */
    Thread thread() {
        return thread;
    }

    /** The autotuner's choice of cycle time. */
    void setCycleTime(long nanos) {
        this.cycleNanos = Math.max(0, nanos);
    }

    /** Whether the calling thread is running a cycle now. */
    boolean ownsCycle() {
        return lock.isHeldByCurrentThread();
    }

    boolean finished() {
        return finished;
    }

    /** Wakes the runner's thread: work a caller left behind. */
    void wake() {
        LockSupport.unpark(thread);
    }

    /**
     * This rank shuts down: its thread takes the cycles up again at once and runs them until the ranks agree to stop,
     * whatever the cycle time. Paced by the cycle time, a caller's last blocking op kept the thread away for a whole
     * cycle time, and a huge one (KOLO_CYCLE_TIME=1e9) held shutdown for KOLO_TIMEOUT_SECONDS.
     */
    void stop() {
        stopping = true;
        LockSupport.unpark(thread);
    }

    /**
     * An op was submitted at {@code now}: cut the runner's between-cycle sleep short, or new ops would wait out the
     * rest of the cycle before negotiation even starts, on every rank. While a caller drives the cycles it takes the
     * op up itself, and waking the runner's thread would only contend with it.
     */
    void submitted(long now) {
        if (!driven(now)) {
            LockSupport.unpark(thread);
        }
    }

    /** Waits for the runner's thread to end; false if it is still running after {@code timeout}. */
    boolean join(Duration timeout) throws InterruptedException {
        thread.join(timeout.toMillis());
        return !thread.isAlive();
    }

    /**
     * Runs cycles on the calling thread until {@code done} or the deadline. Returns early, without error, when the
     * engine finishes; the caller then learns the outcome from its handle.
     *
     * @param nowNanos      the caller's {@link System#nanoTime()} of a moment ago (it computed the deadline from it)
     * @param deadlineNanos when to give up driving, in {@link System#nanoTime()} terms
     */
    void drive(BooleanSupplier done, long nowNanos, long deadlineNanos) {
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
                if (!lock.tryLock()) {
                    // The runner's thread is finishing a cycle, or another caller drives: its cycles run our op too.
                    awaitLockHolder(me, done, deadlineNanos - now);
                    now = System.nanoTime();
                    continue;
                }
                long last = now;
                try {
                    last = driveCycles(done, now, deadlineNanos);
                } finally {
                    // The start of the last cycle run, not a fresh clock read: a cycle that ends the op is short.
                    leaveCycle(last);
                }
                if (!done.getAsBoolean()) {
                    now = System.nanoTime();
                }
            }
        } finally {
            drivers.decrementAndGet();
        }
    }

    /**
     * Sleeps until the thread holding the cycle lock completes ops or lets the lock go (it wakes the registered
     * waiters), the op is done, or {@code leftNanos} (capped) pass. Registered before looking at the op and the lock
     * once more: a holder that ended the op or let the lock go before then is seen here, one after sees the waiter.
     */
    private void awaitLockHolder(Thread me, BooleanSupplier done, long leftNanos) {
        int slot = waiters.register(me);
        try {
            if (!done.getAsBoolean() && !finished && lock.isLocked()) {
                LockSupport.parkNanos(this, Math.min(leftNanos, slot < 0 ? LOCK_POLL_NANOS : LOCK_WAIT_NANOS));
            }
        } finally {
            waiters.unregister(slot);
        }
    }

    /**
     * Takes the cycle for one run on the calling thread ({@link #cycleHere}), if no thread runs one now and the engine
     * goes on; false otherwise. A true return must be followed by {@link #leaveCycle}. For a blocking op that one cycle
     * will likely finish: no driving loop, no deadline, no wait for the lock.
     */
    boolean enterCycle() {
        Thread me = Thread.currentThread();
        // The engine's own callbacks must not recurse into cycles; a virtual thread would pin its carrier.
        if (me == thread || me.isVirtual() || finished || lock.isHeldByCurrentThread() || !lock.tryLock()) {
            return false;
        }
        if (finished) {
            lock.unlock();
            return false;
        }
        return true;
    }

    /** One cycle, between {@link #enterCycle} and {@link #leaveCycle}. */
    void cycleHere(long nowNanos) {
        runCycle(nowNanos);
    }

    /**
     * Gives the cycle back (after {@link #enterCycle}, or a driving caller's cycles); {@code startNanos} was the last
     * cycle's start. The runner's thread stays out of the way for a while, and is woken if the cycles left work behind.
     */
    void leaveCycle(long startNanos) {
        boolean leftWork = true;
        try {
            leftWork = agent.hasWork() || !agent.queueEmpty();
        } finally {
            lastDriveNanos.setRelease(startNanos);
            lock.unlock();
            waiters.wakeAll();
        }
        if (leftWork) {
            LockSupport.unpark(thread);
        }
    }

    /**
     * Cycles until {@code done}, the engine finishes or the deadline passes; returns the clock reading at the start of
     * the last cycle run.
     */
    private long driveCycles(BooleanSupplier done, long nowNanos, long deadlineNanos) {
        long now = nowNanos;
        while (!finished && !done.getAsBoolean()) {
            if (now - deadlineNanos > 0) {
                return now;
            }
            runCycle(now);
            if (finished || done.getAsBoolean()) {
                return now;
            }
            // Not done: another rank has not submitted it yet. Pace like the runner's thread would.
            now = System.nanoTime();
            long rest = cycleNanos - (now - agent.cycleStartNanos());
            if (shouldPause(rest, now)) {
                LockSupport.parkNanos(Math.min(rest, deadlineNanos - now));
                now = System.nanoTime();
            }
        }
        return now;
    }

    /** Whether to sleep out {@code rest} before the next cycle, rather than start it at once (see PROMPT_CYCLES). */
    private boolean shouldPause(long rest, long now) {
        return rest > 0 && !(agent.hasWork() && now - agent.lastDrainNanos() < PROMPT_CYCLES * cycleNanos);
    }

    /** True while a caller runs cycles, or did within the last cycle time (before {@code now}) and so will likely again. */
    private boolean driven(long now) {
        return drivers.get() > 0 || now - lastDriveNanos.getAcquire() < Math.max(cycleNanos, MIN_DRIVEN_NANOS);
    }

    private void runCycle(long now) {
        // Read whether or not someone waits now: a caller may start waiting while this cycle runs.
        long completedBefore = agent.completedOps();
        boolean ended = agent.cycle(now);
        if (ended) {
            finished = true;
            if (Thread.currentThread() != thread) {
                LockSupport.unpark(thread);
            }
        }
        if (ended || agent.completedOps() != completedBefore) {
            waiters.wakeAll();
        }
    }

    private void run() {
        try {
            while (!finished) {
                if (!stopping && driven(System.nanoTime())) {
                    // A caller runs this rank's cycles itself: stay out of its way. Waking every cycle time would
                    // take the CPU from it on a crowded host; a caller that leaves work behind, a submission
                    // nobody drives, and shutdown wake us at once.
                    LockSupport.parkNanos(DRIVEN_PARK_NANOS);
                    continue;
                }
                long start;
                lock.lock();
                try {
                    // Read once the lock is ours: a caller's cycles may have held it meanwhile.
                    start = System.nanoTime();
                    if (!finished) {
                        runCycle(start);
                    }
                } finally {
                    lock.unlock();
                    waiters.wakeAll();
                }
                if (finished) {
                    break;
                }
                long now = System.nanoTime();
                if (agent.hasWork() || agent.lastDrainNanos() - start >= 0) {
                    lastBusyNanos = now;
                } else {
                    long lastDrive = lastDriveNanos.getAcquire();
                    if (lastDrive - lastBusyNanos > 0) {
                        lastBusyNanos = lastDrive;   // a caller ran cycles for its own op meanwhile
                    }
                }
                long period = now - lastBusyNanos < IDLE_AFTER_NANOS ? cycleNanos
                        : Math.max(cycleNanos, Math.min(IDLE_CYCLE_NANOS, (now - lastBusyNanos) / 8));
                if (stopping) {
                    period = Math.min(period, IDLE_CYCLE_NANOS);
                }
                long rest = period - (now - start);
                if (shouldPause(rest, now)) {
                    long completed = agent.completedOps();
                    boolean ranOps = completed != completedAtLastIdle;
                    completedAtLastIdle = completed;
                    idle.idle(start, period, now, ranOps, workArrived);
                }
            }
        } finally {
            lock.lock();
            try {
                agent.close();
            } finally {
                lock.unlock();
                waiters.wakeAll();
            }
        }
    }
}
