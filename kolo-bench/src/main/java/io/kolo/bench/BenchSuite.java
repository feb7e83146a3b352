package io.kolo.bench;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * One {@code kolo bench} run: Kolo on each requested transport, then (with {@code --compare}) Open MPI over
 * shared memory and TCP and Gloo on the same steps, into one {@link Report}. With {@code --compare}, Kolo over shared
 * memory and Open MPI over shared memory take turns at every size instead ({@link TakingTurns}), since this pair's
 * differences are as small as a VM's swings between minutes. Starting Kolo's ranks is the launcher's job, handed in
 * as a {@link KoloRunner}.
 */
public final class BenchSuite {
    /** Default time limit for one peer run; the default 8B..256MiB sweep takes well under a minute. */
    public static final Duration DEFAULT_PEER_TIMEOUT = Duration.ofMinutes(10);

    /** Runs the Kolo bench worker on {@code ranks} ranks with {@code KOLO_TRANSPORT=transport}. */
    public interface KoloRunner {
        /**
         * @param gate null, or the gate whose slices the ranks wait for ({@link SliceGate#DIR_VARIABLE} and
         *             {@link SliceGate#SLICES_VARIABLE} = {@code slices} set in every rank)
         * @return the measurements, one per step
         * @throws BenchFailure when the job failed (its ranks already said why)
         */
        List<Measurement> run(String transport, Collective collective, ElementType type, List<Step> steps,
                              SliceGate gate, int slices) throws InterruptedException;
    }

    /** A Kolo run that failed; the message says how. */
    public static final class BenchFailure extends RuntimeException {
        public BenchFailure(String message) {
            super(message);
        }
    }

    /**
     * @param slices with {@code compare}: Kolo over shared memory and Open MPI over shared memory take turns at every
     *               size, this many times each ({@link SliceGate})
     */
    public record Config(Collective collective, int ranks, long[] sizes, ElementType type, int iterations,
                         int warmup, List<String> transports, boolean compare, int slices, Duration peerTimeout,
                         String commandLine) {
    }

    private BenchSuite() {
    }

    /** The steps every implementation runs: sizes rounded to what the collective can split evenly. */
    public static List<Step> steps(Config config) {
        long[] effective = java.util.Arrays.stream(config.sizes())
                .map(b -> config.collective().effectiveBytes(b, config.type().byteSize(), config.ranks()))
                .filter(b -> b > 0).distinct().toArray();
        if (effective.length == 0) {
            throw new IllegalArgumentException("every size in --sizes is smaller than one " + config.type().id()
                    + " element per rank (" + config.type().byteSize() * config.ranks() + " bytes at "
                    + config.ranks() + " ranks)");
        }
        return Step.plan(effective, config.iterations(), config.warmup());
    }

    public static Report run(Config config, KoloRunner kolo, Map<String, String> env, PrintStream progress)
            throws InterruptedException {
        List<Step> steps = steps(config);
        String loadBefore = loadAverage();
        List<Series> series = new ArrayList<>();
        BenchCache cache = config.compare() ? BenchCache.fromEnvironment(env) : null;
        Peer turnTaker = config.compare() && config.transports().contains("shm")
                ? new OpenMpiPeer("vader", env, cache, config.peerTimeout()) : null;
        Series takenTurns = null;
        for (String transport : config.transports()) {
            String name = "Kolo " + transport;
            if (turnTaker != null && transport.equals("shm")) {
                progress.printf(Locale.ROOT, "kolo bench: %s and %s taking turns, %d slices each per size, %s on %d"
                        + " ranks, %d sizes...%n", name, turnTaker.name(), config.slices(), config.collective().id(),
                        config.ranks(), steps.size());
                Path dir = tempDirectory();
                try {
                    SliceGate gate = new SliceGate(dir);
                    TakingTurns turns = new TakingTurns(gate, turnTaker, config.collective(),
                            config.type(), config.ranks(), steps, config.slices());
                    Thread harness = Thread.ofPlatform().daemon().name("kolo-bench-turns").start(turns);
                    try {
                        series.add(Series.ok(name, kolo.run(transport, config.collective(), config.type(), steps,
                                gate, config.slices())));
                    } finally {
                        turns.stop();
                        harness.join();
                    }
                    takenTurns = turns.series();
                } finally {
                    deleteQuietly(dir);
                }
                continue;
            }
            progress.printf(Locale.ROOT, "kolo bench: %s, %s on %d ranks, %d sizes...%n", name,
                    config.collective().id(), config.ranks(), steps.size());
            series.add(Series.ok(name, kolo.run(transport, config.collective(), config.type(), steps, null, 1)));
        }
        List<Comparison> comparisons = new ArrayList<>();
        if (config.compare()) {
            List<Peer> peers = List.of(
                    new OpenMpiPeer("vader", env, cache, config.peerTimeout()),
                    new OpenMpiPeer("tcp", env, cache, config.peerTimeout()),
                    new GlooPeer(env, cache, config.peerTimeout()));
            for (Peer peer : peers) {
                Series s;
                if (takenTurns != null && peer.name().equals(takenTurns.name())) {
                    s = takenTurns;
                } else {
                    progress.printf(Locale.ROOT, "kolo bench: %s...%n", peer.name());
                    s = peer.run(config.collective(), config.type(), config.ranks(), steps);
                }
                if (s.status() != Series.Status.OK) {
                    progress.printf(Locale.ROOT, "kolo bench: %s %s: %s%n", peer.name(),
                            s.status() == Series.Status.SKIPPED ? "skipped" : "FAILED", s.reason());
                }
                series.add(s);
                comparisons.add(new Comparison(counterpart(peer.name(), config.transports()), peer.name()));
            }
        }
        Map<String, String> machine = describeMachine();
        // Timings on a busy machine are not comparable with a quiet one's: record how busy it was.
        machine.put("loadavg_start", loadBefore);
        machine.put("loadavg_end", loadAverage());
        return new Report(config.collective(), config.ranks(), config.type(), config.commandLine(), steps, series,
                comparisons, machine);
    }

    /**
     * The Kolo series a peer is compared with: shared memory with shared memory, TCP with TCP (Gloo talks
     * TCP), else whatever Kolo ran.
     */
    static String counterpart(String peer, List<String> transports) {
        String wanted = peer.endsWith("shm") ? "shm" : "tcp";
        if (transports.contains(wanted)) {
            return "Kolo " + wanted;
        }
        return "Kolo " + (transports.contains("auto") ? "auto" : transports.getFirst());
    }

    private static Path tempDirectory() {
        try {
            return Files.createTempDirectory("kolo-bench-gate-");
        } catch (IOException e) {
            throw new BenchFailure("cannot create a temporary directory: " + e.getMessage());
        }
    }

    private static void deleteQuietly(Path dir) {
        try (var files = Files.list(dir)) {
            for (Path f : files.toList()) {
                Files.deleteIfExists(f);
            }
            Files.deleteIfExists(dir);
        } catch (IOException ignored) {
            // A temporary directory left behind is harmless.
        }
    }

    /** The 1, 5 and 15 minute load averages (Linux), or "unknown". */
    static String loadAverage() {
        try {
            String[] f = java.nio.file.Files.readString(java.nio.file.Path.of("/proc/loadavg")).trim().split("\\s+");
            return f[0] + " " + f[1] + " " + f[2];
        } catch (java.io.IOException | RuntimeException e) {
            return "unknown";
        }
    }

    static Map<String, String> describeMachine() {
        Map<String, String> m = new LinkedHashMap<>();
        m.put("cpus", Integer.toString(Runtime.getRuntime().availableProcessors()));
        m.put("os", System.getProperty("os.name") + " " + System.getProperty("os.version") + " "
                + System.getProperty("os.arch"));
        m.put("java", System.getProperty("java.vm.name") + " " + System.getProperty("java.runtime.version"));
        m.put("date", java.time.Instant.now().truncatedTo(java.time.temporal.ChronoUnit.SECONDS).toString());
        return m;
    }
}
