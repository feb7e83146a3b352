package io.kolo.bench;

import io.kolo.bootstrap.RendezvousServer;
import io.kolo.launch.JobSecret;
import io.kolo.launch.WorkerEnvironment;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;

/**
 * {@code kolo bench scale}: real jobs of 2, 4, 8, ... ranks on this machine, each through a real rendezvous store,
 * real handshakes and a real transport, as processes up to {@link Config#maxProcesses} and as threads of this JVM
 * beyond (each its own {@code Communicator} over loopback). Grows the job until {@link Config#maxRanks}, a step that
 * fails, or a step that takes longer than {@link Config#stepTimeout}.
 */
public final class ScaleBench {
    /** Which ranks run as processes: all of them, none, or those of jobs up to {@link Config#maxProcesses} ranks. */
    public enum Mode {
        PROCESSES, THREADS, AUTO;

        public String id() {
            return name().toLowerCase(Locale.ROOT);
        }

        public static Mode parse(String s) {
            for (Mode m : values()) {
                if (m.id().equals(s.toLowerCase(Locale.ROOT))) {
                    return m;
                }
            }
            throw new IllegalArgumentException("--mode " + s + ": use processes, threads or auto");
        }
    }

    /**
     * @param transport   KOLO_TRANSPORT of every rank (tcp: the connections the benchmark counts)
     * @param classpath   kolo-bench and kolo-core, for ranks started as processes
     * @param commandLine the command as a user would type it, recorded in the JSON
     */
    public record Config(int minRanks, int maxRanks, Mode mode, int maxProcesses, Duration stepTimeout,
                         String transport, String classpath, String commandLine) {
        public Config {
            if (minRanks < 2 || maxRanks < minRanks) {
                throw new IllegalArgumentException("--max-ranks must be at least " + Math.max(2, minRanks)
                        + ", got " + maxRanks);
            }
            if (maxProcesses < 0) {
                throw new IllegalArgumentException("--max-processes must be 0 or more, got " + maxProcesses);
            }
            if (stepTimeout.isNegative() || stepTimeout.isZero()) {
                throw new IllegalArgumentException("--step-timeout must be at least 1 second");
            }
            if (!transport.equals("tcp") && !transport.equals("auto") && !transport.equals("shm")) {
                throw new IllegalArgumentException("--transport " + transport + ": use tcp, shm or auto");
            }
        }
    }

    private ScaleBench() {
    }

    /** Runs every step in turn, telling {@code progress} of each; stops growing after one that did not finish. */
    public static ScaleReport run(Config config, PrintStream progress) throws InterruptedException {
        ScaleReport.loadClasses(config);
        List<ScaleStep> steps = new ArrayList<>();
        for (int n = config.minRanks(); n <= config.maxRanks(); n *= 2) {
            boolean processes = config.mode() == Mode.PROCESSES
                    || (config.mode() == Mode.AUTO && n <= config.maxProcesses());
            ScaleStep step = processes ? processes(config, n) : threads(config, n);
            steps.add(step);
            progress.println(String.format(Locale.ROOT, "kolo bench scale: %d ranks as %s: %s%s (%.1f s)", n,
                    step.mode(), step.status(), step.ok() ? "" : ": " + step.reason(), step.wallSeconds()));
            if (!step.ok()) {
                break;
            }
        }
        return new ScaleReport(config, Runtime.getRuntime().availableProcessors(), steps);
    }

    /** Every rank's variables: loopback store, this machine as the one host, the configured transport. */
    private static List<Map<String, String>> environments(Config config, int n, RendezvousServer store,
                                                          JobSecret secret) {
        // Shorter than the step's limit, so that a rank's own reason for failing reaches the report first.
        Duration start = Duration.ofSeconds(Math.max(1, config.stepTimeout().toSeconds() * 3 / 4));
        List<Map<String, String>> envs = new ArrayList<>();
        for (int r = 0; r < n; r++) {
            envs.add(WorkerEnvironment.forRank(r, n).local(r, n).cross(0, 1).hostname("localhost")
                    .rendezvous(store.address()).secret(secret).startTimeout(start).timeout(start)
                    .settings(Map.of("KOLO_TRANSPORT", config.transport(), "KOLO_IFACE", "lo")).build());
        }
        return envs;
    }

    private static RendezvousServer store(JobSecret secret) {
        return RendezvousServer.start(InetAddress.getLoopbackAddress(), 0, secret);
    }

    /** The ranks as threads of this JVM; their resources are this process's growth while all of them are joined. */
    // The store is closed early, inside its try, when ranks overrun the step: that releases the ranks waiting on it.
    @SuppressWarnings("try")
    static ScaleStep threads(Config config, int n) throws InterruptedException {
        // Loaded now, while descriptors are free: a job that runs this JVM out of them could not open its class file
        // to report that it did (NoClassDefFoundError instead of the step's reason).
        ScaleStep.failed(n, "threads", ScaleStep.FAILED, "", 0).ok();
        long t0 = System.nanoTime();
        JobSecret secret = JobSecret.generate();
        ProcessResources.Sample before = ProcessResources.sample();
        ProcessResources.Sample[] joined = new ProcessResources.Sample[1];
        long[] requests = new long[2];
        long[] startedAt = new long[1];
        try (RendezvousServer store = store(secret)) {
            List<Map<String, String>> envs = environments(config, n, store, secret);
            CyclicBarrier started = new CyclicBarrier(n, () -> {
                startedAt[0] = System.nanoTime();
                requests[0] = store.requests();
                requests[1] = store.requestBytes();
                joined[0] = ProcessResources.sample();
            });
            Object[] results = new Object[n];
            List<Thread> ranks = new ArrayList<>();
            for (int r = 0; r < n; r++) {
                int rank = r;
                ranks.add(Thread.ofPlatform().daemon().name("kolo-scale-rank-" + r).start(() -> {
                    try {
                        results[rank] = ScaleRank.run(envs.get(rank),
                                () -> started.await(config.stepTimeout().toMillis(), TimeUnit.MILLISECONDS));
                    } catch (Throwable e) {
                        results[rank] = e;
                    }
                }));
            }
            long deadline = System.nanoTime() + config.stepTimeout().toNanos();
            for (Thread t : ranks) {
                t.join(Duration.ofNanos(Math.max(1_000_000, deadline - System.nanoTime())));
            }
            double wall = (System.nanoTime() - t0) / 1e9;
            if (ranks.stream().anyMatch(Thread::isAlive)) {
                // Closing the store releases ranks waiting on it; the rest end at their own timeouts, waited for so
                // that what they hold is gone before anything else is measured in this process.
                store.close();
                for (Thread t : ranks) {
                    t.join(config.stepTimeout());
                }
                long stillRunning = ranks.stream().filter(Thread::isAlive).count();
                // A job that started but whose steady state ran out of time still says how its start went.
                String start = joined[0] == null ? "" : String.format(Locale.ROOT, "; every rank had"
                        + " finished its first allreduce %.1f s after the step began, with %.1f store requests and %.1f"
                        + " sockets per rank", (startedAt[0] - t0) / 1e9, requests[0] / (double) n,
                        joined[0].minus(before).socketFds() / (double) n);
                // Ranks that outlived their own timeouts still hold their sockets: the next step, and writing this
                // report, may find no file descriptor left; say so rather than fail later on an unrelated error.
                String held = stillRunning == 0 ? "" : "; " + stillRunning + " ranks were still running "
                        + config.stepTimeout().toSeconds() + " s later and keep their sockets open";
                return ScaleStep.failed(n, "threads", ScaleStep.TIMED_OUT, "not done within "
                        + config.stepTimeout().toSeconds() + " s (--step-timeout)" + start + held, wall);
            }
            List<ScaleRank.Times> times = new ArrayList<>();
            for (Object o : results) {
                if (o instanceof Throwable t) {
                    return ScaleStep.failed(n, "threads", ScaleStep.FAILED, firstFailure(results), wall);
                }
                times.add((ScaleRank.Times) o);
            }
            ProcessResources.Sample d = joined[0].minus(before);
            return step(n, "threads", wall, times, requests, d.fds() / (double) n, d.socketFds() / (double) n,
                    d.heapBytes() / (double) n, d.rssBytes() / (double) n, d.shmBytes() / (double) n);
        }
    }

    /** The root cause of the first rank that failed that is not only a rank giving up because another did. */
    private static String firstFailure(Object[] results) {
        String first = null;
        for (Object o : results) {
            if (o instanceof Throwable t) {
                Throwable root = t;
                while (root.getCause() != null && root.getCause() != root) {
                    root = root.getCause();
                }
                String message = t.getMessage() + (root != t ? " (" + root + ")" : "");
                if (first == null || (root instanceof IOException && !(first.contains("IOException")))) {
                    first = message;
                }
            }
        }
        return first == null ? "unknown" : first.replace('\n', ' ');
    }

    /** The ranks as processes, each reporting what joining cost it. */
    static ScaleStep processes(Config config, int n) throws InterruptedException {
        long t0 = System.nanoTime();
        JobSecret secret = JobSecret.generate();
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<Process> procs = new ArrayList<>();
        List<String> lines = Collections.synchronizedList(new ArrayList<>());
        List<String> errors = Collections.synchronizedList(new ArrayList<>());
        List<Thread> readers = new ArrayList<>();
        try (RendezvousServer store = store(secret)) {
            for (Map<String, String> env : environments(config, n, store, secret)) {
                // The JIT as a rank's own JVM has it (C2): with C1 only, the steady-state times were C1's.
                ProcessBuilder pb = new ProcessBuilder(java, "-XX:+UseSerialGC",
                        "--enable-native-access=ALL-UNNAMED", "-cp", config.classpath(), ScaleWorker.class.getName());
                Map<String, String> pe = pb.environment();
                pe.keySet().removeIf(k -> k.startsWith("KOLO_"));
                pe.putAll(env);
                Process p = pb.start();
                procs.add(p);
                readers.add(read(p.getInputStream(), lines));
                readers.add(read(p.getErrorStream(), errors));
            }
            long deadline = System.nanoTime() + config.stepTimeout().toNanos();
            boolean timedOut = false;
            for (Process p : procs) {
                if (!p.waitFor(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS)) {
                    timedOut = true;
                    break;
                }
            }
            long requests = store.requests();
            long bytes = store.requestBytes();
            procs.forEach(Process::destroyForcibly);
            for (Thread t : readers) {
                t.join(5_000);
            }
            double wall = (System.nanoTime() - t0) / 1e9;
            if (timedOut) {
                return ScaleStep.failed(n, "processes", ScaleStep.TIMED_OUT, "not done within "
                        + config.stepTimeout().toSeconds() + " s (--step-timeout)", wall);
            }
            List<ScaleRank.Times> times = new ArrayList<>();
            double[] sums = new double[5];
            double shm = 0;
            synchronized (lines) {
                for (String line : lines) {
                    if (!line.startsWith(ScaleWorker.PREFIX + " ")) {
                        continue;
                    }
                    String[] f = line.split(" ");
                    times.add(new ScaleRank.Times(Double.parseDouble(f[1]), Double.parseDouble(f[2]),
                            Double.parseDouble(f[3]), Double.parseDouble(f[4])));
                    sums[0] += Long.parseLong(f[5]);
                    sums[1] += Long.parseLong(f[6]);
                    sums[2] += Long.parseLong(f[8]);
                    sums[3] += Long.parseLong(f[7]);
                    shm = Math.max(shm, Long.parseLong(f[9]));
                }
            }
            if (times.size() < n) {
                String why = errors.isEmpty() ? (n - times.size()) + " of " + n + " ranks reported nothing"
                        : errors.getFirst();
                return ScaleStep.failed(n, "processes", ScaleStep.FAILED, why, wall);
            }
            // Shared memory is the machine's: every rank sees all of the job's segments, so the job's total is the
            // largest any rank saw.
            return step(n, "processes", wall, times, new long[]{requests, bytes}, sums[0] / n, sums[1] / n,
                    sums[2] / n, sums[3] / n, shm / n);
        } catch (IOException e) {
            procs.forEach(Process::destroyForcibly);
            return ScaleStep.failed(n, "processes", ScaleStep.FAILED, "cannot start a rank: " + e.getMessage(),
                    (System.nanoTime() - t0) / 1e9);
        }
    }

    private static Thread read(java.io.InputStream in, List<String> into) {
        return Thread.ofPlatform().daemon().start(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
                for (String line; (line = r.readLine()) != null; ) {
                    into.add(line);
                }
            } catch (IOException ignored) {
                // The rank was ended; what it printed so far is all there is.
            }
        });
    }

    private static ScaleStep step(int n, String mode, double wall, List<ScaleRank.Times> times, long[] store,
                                  double fds, double sockets, double heap, double rss, double shm) {
        double init = 0;
        double first = 0;
        double small = 0;
        double large = 0;
        for (ScaleRank.Times t : times) {
            init = Math.max(init, t.initMs());
            first = Math.max(first, t.firstOpMs());
            small = Math.max(small, t.smallUs());
            large = Math.max(large, t.largeUs());
        }
        return new ScaleStep(n, mode, ScaleStep.OK, "", wall, init, first, small, large, store[0] / (double) n,
                store[1] / (double) n, fds, sockets, heap, rss, shm);
    }

    /** kolo-bench and kolo-core, wherever they were loaded from (jars or classes directories). */
    public static String workerClasspath() {
        List<String> entries = new ArrayList<>();
        for (Class<?> c : List.of(ScaleWorker.class, io.kolo.Communicator.class)) {
            try {
                entries.add(Path.of(c.getProtectionDomain().getCodeSource().getLocation().toURI()).toString());
            } catch (URISyntaxException e) {
                throw new IllegalStateException("cannot locate " + c.getName() + ": " + e.getMessage(), e);
            }
        }
        return String.join(File.pathSeparator, entries);
    }

}
