package io.kolo.launcher;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/**
 * The worker processes of an elastic job: each started on its host (through the {@link RankWrapper}, over ssh for
 * another host), its output relayed tagged with the rank it started as, its exit reported; stopped one at a time
 * (a removed worker) or all together. Unlike {@link Job}, one worker's exit takes nobody else down: the
 * {@link ElasticDriver} decides what follows. What a worker started in a session of its own and left running comes to
 * the launcher where it is a child subreaper ({@link Subreaper}): reaped as it exits, stopped with the workers.
 */
final class ElasticWorkers {
    /** A worker that exited, with its exit code. */
    record Exit(String worker, int code) {
    }

    private record Running(String id, String host, boolean remote, Process process, List<Thread> pumps) {
    }

    private final List<String> program;
    private final String workingDirectory;
    private final Ssh ssh;
    private final Predicate<String> isLocal;
    private final TaggedOutput out;
    private final TaggedOutput err;
    private final Map<String, Running> workers = new ConcurrentHashMap<>();
    private final BlockingQueue<Exit> exits = new LinkedBlockingQueue<>();
    private final Object lock = new Object();
    private volatile boolean stopping;

    ElasticWorkers(List<String> program, String workingDirectory, Ssh ssh, Predicate<String> isLocal, PrintStream out,
                   PrintStream err) {
        this.program = List.copyOf(program);
        this.workingDirectory = workingDirectory;
        this.ssh = ssh;
        this.isLocal = isLocal;
        this.out = new TaggedOutput(out, "stdout");
        this.err = new TaggedOutput(err, "stderr");
    }

    boolean remote(String host) {
        return !isLocal.test(host);
    }

    /** Starts worker {@code id} on {@code host} as rank {@code rank} with {@code env} (sent on its stdin). */
    void start(String id, String host, int rank, Map<String, String> env) throws IOException {
        boolean remote = remote(host);
        List<String> command = remote
                ? RankWrapper.detached(ssh.argv(host, RankWrapper.remoteCommand(workingDirectory, program)))
                : RankWrapper.localCommand(workingDirectory, program);
        if (!remote) {
            Executables.require(program.getFirst(), System.getenv("PATH"), workingDirectory);
        }
        Process p;
        synchronized (lock) {
            if (stopping) {
                throw new IOException("the launcher is stopping");
            }
            p = new ProcessBuilder(command).start();
        }
        OutputStream stdin = p.getOutputStream();
        // The wrapper reads its environment from this line and stops the worker when stdin closes.
        stdin.write(RankWrapper.environmentLine(env).getBytes(StandardCharsets.UTF_8));
        stdin.flush();
        List<Thread> pumps = List.of(pump(rank, p.getInputStream(), out), pump(rank, p.getErrorStream(), err));
        workers.put(id, new Running(id, host, remote, p, pumps));
        // A thread of its own rather than onExit(), whose callbacks need a free thread of the common pool.
        Thread.ofPlatform().daemon().name("kolo-wait-" + id).start(() -> {
            while (true) {
                try {
                    exits.add(new Exit(id, p.waitFor()));
                    return;
                } catch (InterruptedException e) {
                    // Only the process's end ends this wait.
                }
            }
        });
    }

    /** The next exit, or null after {@code timeout}. */
    Exit nextExit(Duration timeout) throws InterruptedException {
        Exit e = exits.poll(Math.max(0, timeout.toMillis()), TimeUnit.MILLISECONDS);
        if (e != null) {
            Running r = workers.remove(e.worker());
            if (r != null) {
                // Its last words come out before the launcher's account of its exit.
                for (Thread t : r.pumps()) {
                    t.join(Duration.ofMillis(300));
                }
            }
        }
        return e;
    }

    String host(String id) {
        Running r = workers.get(id);
        return r == null ? null : r.host();
    }

    /**
     * Reaps the orphans the workers left that came to this launcher and have exited (see {@link Subreaper}). Call it
     * on the thread that starts the workers and runs the discovery script, so that no child of this launcher is ever
     * seen between its start and its being known as its own, and taken for an orphan.
     */
    void reapOrphans() {
        Subreaper.reapExited(ownChildren());
    }

    /**
     * The processes this launcher started and has not seen exit (its workers, its discovery script's runs): any other
     * child of it is an orphan a worker left behind, adopted as a subreaper.
     */
    private Set<Long> ownChildren() {
        Set<Long> own = new java.util.HashSet<>(HostDiscovery.runningPids());
        workers.values().forEach(r -> own.add(r.process().pid()));
        return own;
    }

    Set<String> alive() {
        return Set.copyOf(workers.keySet());
    }

    /** Stops worker {@code id} in the background (TERM, a grace period, KILL); its exit arrives as any other. */
    void stopLater(String id, Duration delay) {
        Running r = workers.get(id);
        if (r != null) {
            Thread.ofPlatform().daemon().name("kolo-stop-" + id).start(() -> {
                try {
                    if (!r.process().waitFor(delay.toMillis(), TimeUnit.MILLISECONDS)) {
                        stop(List.of(r));
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
        }
    }

    /**
     * Stops every worker and waits for them (and what they started) to be gone, then the orphans they left that came
     * to this launcher; false if some process did not exit even after SIGKILL.
     */
    boolean stopAll() {
        synchronized (lock) {
            stopping = true;
        }
        stop(new ArrayList<>(workers.values()));
        for (Running r : workers.values()) {
            for (Thread t : r.pumps()) {
                try {
                    t.join(Duration.ofSeconds(2));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return true;
                }
            }
        }
        return Subreaper.stopAdopted(ownChildren(), Job.DEFAULT_GRACE);
    }

    private static void stop(List<Running> some) {
        Set<ProcessHandle> local = new LinkedHashSet<>();
        List<Process> remote = new ArrayList<>();
        for (Running r : some) {
            if (r.remote()) {
                remote.add(r.process());
            } else {
                local.add(r.process().toHandle());
                r.process().descendants().forEach(local::add);
            }
        }
        ProcessStopper.stopRemote(remote, Duration.ofSeconds(RankWrapper.GRACE_SECONDS + 3));
        ProcessStopper.stop(local, Job.DEFAULT_GRACE);
    }

    private static Thread pump(int rank, InputStream in, TaggedOutput target) {
        return Thread.ofPlatform().daemon().name("kolo-worker-" + rank).start(() -> {
            try (in) {
                target.pump(rank, in, null);
            } catch (IOException e) {
                // The worker was killed mid-write; its exit code tells the story.
            }
        });
    }
}
