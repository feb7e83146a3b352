package io.kolo.launcher;

import io.kolo.bootstrap.IoReason;
import io.kolo.bootstrap.KeyValueStore;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * Runs the ranks of one job on this machine: starts them, relays their output, and when one fails (or the
 * launcher is told to stop) takes all the others down with it, descendants included, so that no rank is
 * left waiting forever on a peer that is gone.
 */
final class Job {
    static {
        // Loaded now, not when the job ends: by then strangers or a flood of connections to the rendezvous server may
        // hold every descriptor this process may open, and a class file read then fails (NoClassDefFoundError).
        try {
            Class.forName(ProcessStopper.class.getName(), true, Job.class.getClassLoader());
        } catch (ClassNotFoundException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    static final int START_FAILED = 127;
    /** The launcher's stdout was closed under it: a shell's code for a process that SIGPIPE ended. */
    static final int OUTPUT_CLOSED = 141;
    /** ssh's own exit code when the connection failed, as opposed to the remote command's. */
    static final int SSH_FAILED = 255;
    // Remote ranks get the remote wrapper's grace period plus this much before their ssh client is killed.
    private static final Duration REMOTE_SLACK = Duration.ofSeconds(3);
    static final Duration DEFAULT_GRACE = Duration.ofSeconds(5);
    /** How long the other ranks may take to fail on their own after one rank died, before they are terminated. */
    static final Duration FAIL_FAST_WINDOW = Duration.ofSeconds(5);
    // After the ranks exit, how long to wait for pipes held open by descendants that escaped us.
    private static final Duration DRAIN = Duration.ofSeconds(2);
    private static final Duration DESCENDANT_POLL = Duration.ofMillis(100);

    private final List<RankLaunch> launches;
    private final FailureRecord failures;
    private final TaggedOutput out;
    private final TaggedOutput err;
    private final PrintStream messages;
    private final Path outputDir;
    private final Duration grace;
    private final Process[] processes;
    // Remote ranks are stopped by closing their ssh stdin: the remote wrapper then terminates them there.
    private final Set<Process> remote = ConcurrentHashMap.newKeySet();
    private final List<Thread> pumps = new ArrayList<>();
    private final Thread[][] rankPumps;
    private final BlockingQueue<Integer> exits = new LinkedBlockingQueue<>();
    private final Object terminationLock = new Object();
    // Everything the ranks have started, seen by polling: once a rank exits its children are re-parented
    // and can no longer be found from it, yet they may still hold its output pipes or the GPU.
    private final Set<ProcessHandle> descendants = ConcurrentHashMap.newKeySet();
    private volatile boolean stopping;
    // The launcher's stdout went away (kolo run ... | head): the ranks are being stopped for it.
    private volatile boolean outputClosed;
    // A failure on another node that this node's ranks are being stopped for.
    private volatile FailureRecord.Failure elsewhere;
    // The failure of one of this launcher's own ranks, once seen.
    private volatile FailureRecord.Failure own;

    Job(List<RankLaunch> launches, KeyValueStore store, PrintStream out, PrintStream err, Path outputDir,
        Duration grace) {
        this(launches, FailureRecord.inStore(store, err), out, err, outputDir, grace);
    }

    Job(List<RankLaunch> launches, FailureRecord failures, PrintStream out, PrintStream err, Path outputDir,
        Duration grace) {
        this.launches = launches;
        this.failures = failures;
        this.out = new TaggedOutput(out, "stdout", this::outputClosed);
        this.err = new TaggedOutput(err, "stderr");
        this.messages = err;
        this.outputDir = outputDir;
        this.grace = grace;
        this.processes = new Process[launches.size()];
        this.rankPumps = new Thread[launches.size()][];
    }

    /** Prefixes every line of the ranks' output with the time it arrived (mpirun --timestamp-output). */
    Job timestampOutput(boolean on) {
        out.timestamps(on);
        err.timestamps(on);
        return this;
    }

    /** Runs the job to the end; the exit code of the first rank that failed, or 0. */
    int run() throws InterruptedException {
        Subreaper.settle();
        for (int i = 0; i < launches.size(); i++) {
            RankLaunch launch = launches.get(i);
            try {
                start(i, launch);
            } catch (IOException e) {
                if (stopping) {
                    terminate(running());
                    return outputClosed ? OUTPUT_CLOSED : 143;
                }
                message("kolo: cannot start rank " + launch.rank() + " (" + String.join(" ", launch.program())
                        + "): " + e.getMessage());
                terminate(running());
                awaitPumps();
                return START_FAILED;
            }
        }
        Thread tracker = Thread.ofPlatform().daemon().name("kolo-descendants").start(this::trackDescendants);
        int remaining = launches.size();
        FailureRecord.Failure failure = null;
        while (remaining > 0) {
            int index = exits.take();
            remaining--;
            int code = processes[index].exitValue();
            if (code != 0 && failure == null && !stopping && elsewhere == null) {
                // Record before killing anyone, so ranks that notice the failure first can name the cause.
                failure = failures.record(launches.get(index), code);
                own = failure;
                // Let the failing rank's last words (usually its stack trace) come out before ours.
                for (Thread t : rankPumps[index]) {
                    t.join(Duration.ofMillis(300));
                }
                List<Process> others = running();
                message("kolo: " + failure.cause() + (others.isEmpty() ? ""
                        : "; terminating the other " + others.size() + (others.size() == 1 ? " rank" : " ranks")));
                RankLaunch failed = launches.get(index);
                KoloClassPath.hintFor(failed.program(), failed.workingDirectory()).ifPresent(this::message);
                // Kolo ranks notice a dead peer within moments and exit naming it; give them that moment so
                // their explanation reaches the user, then stop whatever is still running.
                awaitExit(others, FAIL_FAST_WINDOW);
                terminate(running());
            }
        }
        tracker.interrupt();
        // Ranks are done; whatever they left running in the background goes with them.
        terminate(List.of());
        awaitPumps();
        if (failure != null) {
            return failure.code();
        }
        if (elsewhere != null) {
            return elsewhere.code();
        }
        return outputClosed ? OUTPUT_CLOSED : stopping ? 143 : 0;
    }

    /** The job is ending: stopped, or failed here or elsewhere. */
    boolean ending() {
        return stopping || elsewhere != null || own != null;
    }

    /**
     * A rank on another node failed (or that node was lost): stops this node's ranks as a local failure would,
     * after the same window in which Kolo ranks fail on their own naming it. Returns at once if the job is
     * already ending for another reason.
     */
    void failElsewhere(FailureRecord.Failure failure) {
        List<Process> alive;
        synchronized (terminationLock) {
            if (stopping || elsewhere != null || own != null) {
                return;
            }
            elsewhere = failure;
            alive = running();
        }
        message("kolo: " + failure.cause() + (alive.isEmpty() ? "" : "; terminating this node's " + alive.size()
                + (alive.size() == 1 ? " rank" : " ranks")));
        try {
            awaitExit(alive, FAIL_FAST_WINDOW);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        terminate(running());
    }

    private static void awaitExit(List<Process> processes, Duration window) throws InterruptedException {
        long deadline = System.nanoTime() + window.toNanos();
        for (Process p : processes) {
            long left = deadline - System.nanoTime();
            if (left <= 0 || !p.waitFor(left, TimeUnit.NANOSECONDS)) {
                return;
            }
        }
    }

    /** Called from the shutdown hook on Ctrl-C or SIGTERM: stop every rank the same way a failure does. */
    void stop() {
        List<Process> alive;
        synchronized (terminationLock) {
            stopping = true;
            alive = running();
        }
        if (!alive.isEmpty()) {
            message("kolo: interrupted; terminating " + alive.size() + (alive.size() == 1 ? " rank" : " ranks"));
        }
        terminate(alive);
    }

    /**
     * The launcher's stdout can no longer be written (its reader exited: {@code kolo run ... | head}): stop every rank,
     * as mpirun ends when SIGPIPE ends it, rather than run the job to its end with nowhere for its output to go. On a
     * thread of its own: the caller is a rank's output pump, which must go on draining that rank's pipe meanwhile.
     */
    private void outputClosed() {
        List<Process> alive;
        synchronized (terminationLock) {
            if (stopping) {
                return;
            }
            stopping = true;
            outputClosed = true;
            alive = running();
        }
        message("kolo: the output was closed (broken pipe); terminating " + alive.size()
                + (alive.size() == 1 ? " rank" : " ranks"));
        Thread.ofPlatform().daemon().name("kolo-output-closed").start(() -> terminate(alive));
    }

    /** Starts {@code launch}, the {@code index}-th of this launcher's ranks (its rank may be any of the job's). */
    private void start(int index, RankLaunch launch) throws IOException {
        ProcessBuilder pb = new ProcessBuilder(launch.command());
        pb.environment().putAll(launch.env());
        if (!launch.remote()) {
            // The wrapper would start and then fail to exec; say it here, as a plain start would.
            Executables.require(launch.program().getFirst(), pb.environment().get("PATH"), launch.workingDirectory());
        }
        OutputStream outFile = null;
        OutputStream errFile = null;
        if (outputDir != null) {
            Path dir = outputDir.resolve("rank." + launch.rank());
            try {
                Files.createDirectories(dir);
                outFile = Files.newOutputStream(dir.resolve("stdout"));
                errFile = Files.newOutputStream(dir.resolve("stderr"));
            } catch (java.nio.file.FileSystemException e) {
                throw new IOException("cannot write its output under " + dir + ": "
                        + IoReason.of(e), e);
            }
        }
        Process p;
        // Serialised with termination so a signal arriving mid-start cannot miss a just-started rank.
        synchronized (terminationLock) {
            if (stopping) {
                throw new IOException("the launcher is stopping");
            }
            p = pb.start();
            processes[index] = p;
            if (launch.remote()) {
                remote.add(p);
            }
        }
        if (launch.stdin() != null) {
            OutputStream stdin = p.getOutputStream();
            stdin.write(launch.stdin().getBytes(java.nio.charset.StandardCharsets.UTF_8));
            stdin.flush();
        } else {
            p.getOutputStream().close();
        }
        rankPumps[index] = new Thread[] {
                pump(launch.rank(), p.getInputStream(), out, outFile, "stdout"),
                pump(launch.rank(), p.getErrorStream(), err, errFile, "stderr")};
        pumps.addAll(List.of(rankPumps[index]));
        p.onExit().thenRun(() -> exits.add(index));
    }

    private Thread pump(int rank, InputStream in, TaggedOutput target, OutputStream file, String name) {
        return Thread.ofPlatform().daemon().name("kolo-rank-" + rank + "-" + name).start(() -> {
            try (in; OutputStream f = file) {
                target.pump(rank, in, f);
            } catch (IOException e) {
                // The rank was killed mid-write or the pipe closed under us; its exit code tells the story.
            }
        });
    }

    private void trackDescendants() {
        while (!Thread.currentThread().isInterrupted()) {
            for (Process p : processes) {
                try {
                    if (p != null && p.isAlive()) {
                        p.descendants().forEach(descendants::add);
                    }
                } catch (RuntimeException cannotReadProc) {
                    // e.g. out of descriptors for a moment: what was tracked stays, the next poll adds the rest.
                }
            }
            Subreaper.track(startedPids(), descendants);
            try {
                Thread.sleep(DESCENDANT_POLL);
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    /** The pids of the processes this job started itself: the launcher's children that are not adopted. */
    private Set<Long> startedPids() {
        synchronized (terminationLock) {
            return java.util.Arrays.stream(processes).filter(java.util.Objects::nonNull).map(Process::pid)
                    .collect(java.util.stream.Collectors.toSet());
        }
    }

    private List<Process> running() {
        synchronized (terminationLock) {
            List<Process> alive = new ArrayList<>();
            for (Process p : processes) {
                if (p != null && p.isAlive()) {
                    alive.add(p);
                }
            }
            return alive;
        }
    }

    /**
     * SIGTERM to the ranks and everything they started, a grace period for them to clean up, then SIGKILL.
     * Descendants are collected before anyone is signalled: once a rank dies its children are re-parented
     * and can no longer be found from it.
     */
    private void terminate(List<Process> ranks) {
        synchronized (terminationLock) {
            // Ranks first, so a shell rank dies quietly instead of reporting its killed child.
            Set<ProcessHandle> all = new LinkedHashSet<>();
            List<Process> remoteRanks = new ArrayList<>();
            for (Process p : ranks) {
                if (remote.contains(p)) {
                    remoteRanks.add(p);
                } else {
                    all.add(p.toHandle());
                }
            }
            for (Process p : ranks) {
                if (!remote.contains(p)) {
                    p.descendants().forEach(all::add);
                }
            }
            descendants.stream().filter(ProcessHandle::isAlive)
                    .filter(h -> remote.stream().noneMatch(r -> r.pid() == h.pid())).forEach(all::add);
            ProcessStopper.stopRemote(remoteRanks, Duration.ofSeconds(RankWrapper.GRACE_SECONDS).plus(REMOTE_SLACK));
            // Then the ranks' orphans that came to the launcher (never polled in time, or adopted meanwhile).
            if (!(ProcessStopper.stop(all, grace) & Subreaper.stopAdopted(startedPids(), grace))) {
                message("kolo: some processes did not exit even after SIGKILL");
            }
        }
    }

    private void awaitPumps() throws InterruptedException {
        long deadline = System.nanoTime() + DRAIN.toNanos();
        for (Thread t : pumps) {
            long left = deadline - System.nanoTime();
            if (left > 0) {
                t.join(Duration.ofNanos(left));
            }
        }
    }

    private void message(String line) {
        synchronized (err) {
            messages.println(line);
            messages.flush();
        }
    }
}
