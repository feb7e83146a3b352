package io.kolo.launcher.job;

import io.kolo.launcher.elastic.HostDiscovery;
import io.kolo.launcher.start.ProcessStopper;
import io.kolo.launcher.start.RankLaunch;
import io.kolo.launcher.start.RankWrapper;
import io.kolo.launcher.start.Subreaper;
import io.kolo.launcher.start.TaggedOutput;
import io.kolo.launcher.start.WorkerStart;

import io.kolo.bootstrap.IoReason;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * The workers this launcher started, whatever the job (static, elastic, a node's share of an {@code --nnodes} one):
 * each started as its {@link WorkerStart} says, its output relayed tagged with its rank (and written under
 * {@code --output-dir}), and everything that happens to the job reported as one stream of {@link Event}s to its
 * {@link Supervisor}: a worker's exit, and a failure elsewhere (another node's). Stopped one at a time (a removed
 * worker) or all together, with what they started: their descendants, polled while they run, and the orphans that
 * came to the launcher as a child subreaper ({@link Subreaper}).
 */
public final class WorkerGroup {
    static {
        // Loaded now, not when the job ends: by then strangers or a flood of connections to the rendezvous server may
        // hold every descriptor this process may open, and a class file read then fails (NoClassDefFoundError).
        try {
            Class.forName(ProcessStopper.class.getName(), true, WorkerGroup.class.getClassLoader());
        } catch (ClassNotFoundException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** What reaches the supervisor. */
    public sealed interface Event permits Exited, FailedElsewhere {
    }

    /** Worker {@code worker}, started as {@code launch}, exited with {@code code}. */
    public record Exited(String worker, int code, RankLaunch launch) implements Event {
    }

    /** The job failed outside this launcher (a rank of another node, or a node lost). */
    record FailedElsewhere(FailureRecord.Failure failure) implements Event {
    }

    private record Running(String id, RankLaunch launch, Process process, List<Thread> pumps) {
        boolean remote() {
            return launch.start().remote();
        }
    }

    // Remote workers get the remote wrapper's grace period plus this much before their ssh client is killed.
    private static final Duration REMOTE_SLACK = Duration.ofSeconds(3);
    // After the workers exit, how long to wait for pipes held open by descendants that escaped us.
    private static final Duration DRAIN = Duration.ofSeconds(2);
    private static final Duration DESCENDANT_POLL = Duration.ofMillis(100);
    // How long a failed worker's last words (usually its stack trace) may take to come out before the account of it.
    private static final Duration LAST_WORDS = Duration.ofMillis(300);

    private final TaggedOutput out;
    private final TaggedOutput err;
    private final Path outputDir;
    private final Duration grace;
    private final LauncherView view;
    private final Map<String, Running> workers = new ConcurrentHashMap<>();
    private final List<Thread> pumps = new ArrayList<>();
    private final BlockingQueue<Event> events = new LinkedBlockingQueue<>();
    private final Object lock = new Object();
    // Every process this group started, exited or not: a child of the launcher with another pid is an adopted orphan.
    private final Set<Long> started = ConcurrentHashMap.newKeySet();
    // Everything the workers have started, seen by polling: once a worker exits its children are re-parented and can
    // no longer be found from it, yet they may still hold its output pipes or the GPU.
    private final Set<ProcessHandle> descendants = ConcurrentHashMap.newKeySet();
    private final Set<Path> opened = ConcurrentHashMap.newKeySet();
    private volatile boolean stopping;
    private Thread tracker;

    /**
     * @param outputDir      also write each worker's output to DIR/rank.N/stdout and stderr; null: no
     * @param onOutputClosed run when the launcher's stdout can no longer be written ({@code kolo run ... | head})
     */
    WorkerGroup(PrintStream out, PrintStream err, Path outputDir, Duration grace, Runnable onOutputClosed,
                LauncherView view) {
        this.out = new TaggedOutput(out, "stdout", onOutputClosed);
        this.err = new TaggedOutput(err, "stderr");
        this.outputDir = outputDir;
        this.grace = grace;
        this.view = view;
        if (view.on()) {
            this.out.copyLinesTo(view::output);
            this.err.copyLinesTo(view::output);
        }
    }

    /** Prefixes every line of the workers' output with the time it arrived (mpirun --timestamp-output). */
    public void timestampOutput(boolean on) {
        out.timestamps(on);
        err.timestamps(on);
    }

    /** Starts worker {@code id} as {@code launch} says; refused once the group is stopping. */
    public void start(String id, RankLaunch launch) throws IOException {
        WorkerStart how = launch.start();
        how.check(launch.program(), launch.workingDirectory());
        OutputStream outFile = null;
        OutputStream errFile = null;
        if (outputDir != null) {
            Path dir = outputDir.resolve("rank." + launch.rank());
            try {
                Files.createDirectories(dir);
                outFile = open(dir.resolve("stdout"));
                errFile = open(dir.resolve("stderr"));
            } catch (java.nio.file.FileSystemException e) {
                throw new IOException("cannot write its output under " + dir + ": " + IoReason.of(e), e);
            }
        }
        Process p;
        // Serialised with stopping, so a signal arriving mid-start cannot miss a just-started worker.
        synchronized (lock) {
            if (stopping) {
                throw new IOException("the launcher is stopping");
            }
            p = new ProcessBuilder(launch.command()).start();
            started.add(p.pid());
            List<Thread> own = List.of(pump(launch.rank(), p.getInputStream(), out, outFile, "stdout"),
                    pump(launch.rank(), how.errors(p.getErrorStream()), err, errFile, "stderr"));
            pumps.addAll(own);
            workers.put(id, new Running(id, launch, p, own));
        }
        view.started(launch.rank(), how.host() != null ? how.host() : "localhost", p.pid());
        // A thread of its own rather than onExit(), whose callbacks need a free thread of the common pool.
        Thread.ofPlatform().daemon().name("kolo-wait-" + id).start(() -> {
            while (true) {
                try {
                    events.add(new Exited(id, how.exitCode(p.waitFor()), launch));
                    return;
                } catch (InterruptedException e) {
                    // Only the process's end ends this wait.
                }
            }
        });
        // After its waiter: a worker that dies before it has read its stdin is reported as any other.
        how.handOver(p, launch.env());
        if (tracker == null) {
            tracker = Thread.ofPlatform().daemon().name("kolo-descendants").start(this::trackDescendants);
        }
    }

    /**
     * A worker's output file: emptied by the first worker of the job with its rank, added to by later ones (an elastic
     * job's worker started for a rank another had before).
     */
    private OutputStream open(Path file) throws IOException {
        return opened.add(file) ? Files.newOutputStream(file)
                : Files.newOutputStream(file, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
    }

    /**
     * The next event, or null after {@code timeout}. A failed worker's output is let out first, so that its last words
     * come before the launcher's account of its exit.
     */
    public Event next(Duration timeout) throws InterruptedException {
        Event e = events.poll(Math.max(0, timeout.toNanos()), TimeUnit.NANOSECONDS);
        if (e instanceof Exited x) {
            Running r = workers.remove(x.worker());
            if (r != null && x.code() != 0) {
                for (Thread t : r.pumps()) {
                    t.join(LAST_WORDS);
                }
            }
        }
        return e;
    }

    /** A failure outside this launcher: reaches the supervisor as every other event. */
    void failedElsewhere(FailureRecord.Failure failure) {
        events.add(new FailedElsewhere(failure));
    }

    /** The workers whose exit has not been taken by {@link #next} yet. */
    Set<String> alive() {
        return Set.copyOf(workers.keySet());
    }

    /** How many workers are still running. */
    int running() {
        return (int) workers.values().stream().filter(r -> r.process().isAlive()).count();
    }

    boolean stopping() {
        return stopping;
    }

    /** Refuses further starts; true the first time (the caller then stops the workers). */
    boolean refuseStarts() {
        synchronized (lock) {
            boolean first = !stopping;
            stopping = true;
            return first;
        }
    }

    /** Waits up to {@code window} for every running worker to exit by itself. */
    void awaitExit(Duration window) throws InterruptedException {
        long deadline = System.nanoTime() + window.toNanos();
        for (Running r : List.copyOf(workers.values())) {
            long left = deadline - System.nanoTime();
            if (left <= 0 || !r.process().waitFor(left, TimeUnit.NANOSECONDS)) {
                return;
            }
        }
    }

    /**
     * Reaps the orphans the workers left that came to this launcher, keeping them to be stopped with the job. Call it
     * on the thread that starts the workers (and an elastic job's discovery script), so that no child of this launcher
     * is ever seen between its start and its being known as its own, and taken for an orphan.
     */
    void reapOrphans() {
        Subreaper.track(ownChildren(), descendants);
    }

    /** Stops worker {@code id} after {@code delay} unless it left by then; its exit arrives as any other. */
    public void stopLater(String id, Duration delay) {
        Running r = workers.get(id);
        if (r != null) {
            Thread.ofPlatform().daemon().name("kolo-stop-" + id).start(() -> {
                try {
                    if (!r.process().waitFor(delay.toMillis(), TimeUnit.MILLISECONDS)) {
                        stop(List.of(r), false);
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
        }
    }

    /**
     * Stops every worker still running and what they started (TERM, the grace period, KILL), and the orphans that came
     * to this launcher; false if some process did not exit even after SIGKILL.
     */
    boolean stopAll() {
        synchronized (lock) {
            return stop(List.copyOf(workers.values()), true);
        }
    }

    /** The workers have all exited: stops what they left running, and lets their last output out. */
    boolean finish() throws InterruptedException {
        Thread t = tracker;
        if (t != null) {
            t.interrupt();
        }
        boolean clean = stopAll();
        long deadline = System.nanoTime() + DRAIN.toNanos();
        for (Thread p : List.copyOf(pumps)) {
            long left = deadline - System.nanoTime();
            if (left > 0) {
                p.join(Duration.ofNanos(left));
            }
        }
        return clean;
    }

    /**
     * SIGTERM to {@code some} and what they started, a grace period for them to clean up, then SIGKILL; remote workers
     * by closing their connection's stdin. Descendants are collected before anyone is signalled: once a worker dies its
     * children are re-parented and can no longer be found from it.
     */
    private boolean stop(List<Running> some, boolean withOrphans) {
        // Workers first, so a shell worker dies quietly instead of reporting its killed child.
        Set<ProcessHandle> local = new LinkedHashSet<>();
        List<Process> remote = new ArrayList<>();
        for (Running r : some) {
            if (r.remote()) {
                r.launch().start().askToStop();
                remote.add(r.process());
            } else if (r.process().isAlive()) {
                local.add(r.process().toHandle());
            }
        }
        for (Running r : some) {
            if (!r.remote()) {
                r.process().descendants().forEach(local::add);
            }
        }
        if (withOrphans) {
            Set<Long> remotePids = new HashSet<>();
            workers.values().stream().filter(Running::remote).forEach(r -> remotePids.add(r.process().pid()));
            descendants.stream().filter(ProcessHandle::isAlive).filter(h -> !remotePids.contains(h.pid()))
                    .forEach(local::add);
        }
        ProcessStopper.stopRemote(remote, Duration.ofSeconds(RankWrapper.GRACE_SECONDS).plus(REMOTE_SLACK));
        boolean clean = ProcessStopper.stop(local, grace);
        // Then the workers' orphans that came to the launcher (never polled in time, or adopted meanwhile).
        return withOrphans ? Subreaper.stopAdopted(ownChildren(), grace) & clean : clean;
    }

    /**
     * The processes this launcher started itself (every worker, exited or not; an elastic job's discovery script's
     * runs): any other child of it is an orphan a worker left behind, adopted as a subreaper.
     */
    private Set<Long> ownChildren() {
        Set<Long> own = new HashSet<>(HostDiscovery.runningPids());
        own.addAll(started);
        return own;
    }

    private void trackDescendants() {
        while (!Thread.currentThread().isInterrupted()) {
            for (Running r : List.copyOf(workers.values())) {
                try {
                    if (!r.remote() && r.process().isAlive()) {
                        r.process().descendants().forEach(descendants::add);
                    }
                } catch (RuntimeException cannotReadProc) {
                    // e.g. out of descriptors for a moment: what was tracked stays, the next poll adds the rest.
                }
            }
            try {
                Thread.sleep(DESCENDANT_POLL);
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    private static Thread pump(int rank, InputStream in, TaggedOutput target, OutputStream file, String name) {
        return Thread.ofPlatform().daemon().name("kolo-rank-" + rank + "-" + name).start(() -> {
            try (in; OutputStream f = file) {
                target.pump(rank, in, f);
            } catch (IOException e) {
                // The worker was killed mid-write or the pipe closed under us; its exit code tells the story.
            }
        });
    }
}
