package io.kolo.launcher.start;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * Makes the launcher a child subreaper (Linux's {@code PR_SET_CHILD_SUBREAPER}): a process a rank started and that
 * outlives it (in a session of its own, so out of reach of the rank's process group) is re-parented to the launcher
 * instead of to init, where the launcher finds it among its own children and stops it with the job. Polling the
 * ranks' descendants alone misses such a process when the rank exits between two polls.
 *
 * <p>The launcher then also has to reap what it adopted: the JDK waits only for the processes it started. Only the
 * pids of adopted processes are ever waited for here, never a process the JDK started (that would take its exit code
 * from the JDK). A child counts as adopted when it is none of the processes the launcher started, so only a launcher
 * that knows every child it starts while its ranks run may become a subreaper ({@code kolo run}: its ranks; an elastic
 * run: its workers and its discovery script's runs, started on one thread that also does the reaping, so that no
 * child is ever seen between its start and its being known; not {@code kolo bench}).
 *
 * <p>Linux only, and only where the launcher may make native calls (the {@code kolo} script allows it); elsewhere
 * {@link #become()} does nothing and the launcher relies on polling alone.
 */
public final class Subreaper {
    private static final System.Logger LOG = System.getLogger(Subreaper.class.getName());
    private static final int PR_SET_CHILD_SUBREAPER = 36;
    private static final int WNOHANG = 1;
    private static final int STOP_ROUNDS = 3;
    // Never longer than this is a job's start held up for the call (it takes far less).
    private static final Duration SETTLE_LIMIT = Duration.ofSeconds(2);
    private static volatile MethodHandle waitpid;
    private static Thread becoming;

    private Subreaper() {
    }

    /**
     * {@link #become()} on a thread of its own: binding a native call costs a starting JVM tens of milliseconds
     * (docs/performance.md, "First run"), which this way overlaps the launcher's other preparations; {@link #settle()}
     * waits for it before the first rank starts.
     */
    public static synchronized void becomeSoon() {
        if (becoming == null) {
            becoming = Thread.ofPlatform().daemon().name("kolo-subreaper").start(Subreaper::become);
        }
    }

    /** Waits (briefly at most) for {@link #becomeSoon()}, so that no rank starts before this process adopts orphans. */
    public static void settle() throws InterruptedException {
        Thread t;
        synchronized (Subreaper.class) {
            t = becoming;
        }
        if (t != null) {
            t.join(SETTLE_LIMIT);
        }
    }

    /** Makes this process a child subreaper; true if it now is one. Once per process is enough; later calls are free. */
    // Native calls, made only where native access is enabled (checked below).
    @SuppressWarnings("restricted")
    static synchronized boolean become() {
        if (waitpid != null) {
            return true;
        }
        if (!System.getProperty("os.name").startsWith("Linux") || !Subreaper.class.getModule().isNativeAccessEnabled()) {
            return false;
        }
        try {
            Linker linker = Linker.nativeLinker();
            MethodHandle prctl = linker.downcallHandle(linker.defaultLookup().find("prctl").orElseThrow(),
                    FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_LONG,
                            ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG),
                    Linker.Option.firstVariadicArg(1));
            MethodHandle wait = linker.downcallHandle(linker.defaultLookup().find("waitpid").orElseThrow(),
                    FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.ADDRESS,
                            ValueLayout.JAVA_INT));
            if ((int) prctl.invokeExact(PR_SET_CHILD_SUBREAPER, 1L, 0L, 0L, 0L) != 0) {
                return false;
            }
            waitpid = wait;
            return true;
        } catch (Throwable e) {
            LOG.log(System.Logger.Level.DEBUG, "cannot become a child subreaper; descendants are found by polling", e);
            return false;
        }
    }

    /** Whether {@link #become()} succeeded: orphans of the ranks are then this process's children. */
    static boolean active() {
        return waitpid != null;
    }

    /**
     * The children of this process that it did not start itself (their pids are not in {@code started}), adopted
     * orphans, each followed by what it started. Empty unless {@link #active()}.
     */
    static List<ProcessHandle> adopted(Set<Long> started) {
        if (!active()) {
            return List.of();
        }
        Set<ProcessHandle> adopted = new LinkedHashSet<>();
        ProcessHandle.current().children().filter(h -> !started.contains(h.pid())).forEach(orphan -> {
            adopted.add(orphan);
            orphan.descendants().forEach(adopted::add);
        });
        return new ArrayList<>(adopted);
    }

    /**
     * Adds the adopted orphans (see {@link #adopted}) to {@code into}, to be stopped with the job, and reaps those that
     * have exited.
     */
    public static void track(Set<Long> started, Set<ProcessHandle> into) {
        try {
            List<ProcessHandle> orphans = adopted(started);
            into.addAll(orphans);
            orphans.forEach(Subreaper::reap);
        } catch (RuntimeException cannotReadProc) {
            // e.g. out of descriptors for a moment: the next call sees them.
        }
    }

    /** Reaps the adopted orphans (see {@link #adopted}) that have exited, so that none stays a zombie. */
    static void reapExited(Set<Long> started) {
        try {
            adopted(started).forEach(Subreaper::reap);
        } catch (RuntimeException cannotReadProc) {
            // e.g. out of descriptors for a moment: the next call reaps them.
        }
    }

    /**
     * Stops the adopted orphans (see {@link #adopted}) as {@link ProcessStopper#stop} does, and reaps them. What they
     * started is adopted in turn as they die, so a few more rounds take that along. False if some did not exit.
     */
    public static boolean stopAdopted(Set<Long> started, Duration grace) {
        boolean stopped = true;
        List<ProcessHandle> adopted = adopted(started);
        for (int round = 0; round < STOP_ROUNDS && !adopted.isEmpty(); round++) {
            stopped &= ProcessStopper.stop(adopted, grace);
            adopted.forEach(Subreaper::reap);
            adopted = adopted(started);
        }
        return stopped && adopted.isEmpty();
    }

    /**
     * Reaps {@code orphan} if it has exited and is this process's child (one {@link #adopted} returned only: see the
     * class comment); never blocks.
     */
    static void reap(ProcessHandle orphan) {
        MethodHandle wait = waitpid;
        if (wait == null) {
            return;
        }
        try {
            int ignored = (int) wait.invokeExact((int) orphan.pid(), MemorySegment.NULL, WNOHANG);
        } catch (Throwable e) {
            LOG.log(System.Logger.Level.DEBUG, "waitpid(" + orphan.pid() + ") failed", e);
        }
    }
}
