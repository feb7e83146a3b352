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
         * @param gate null, or the gate whose slices the ranks wait for ({@link SliceGate#variables()} set in
         *             every rank)
         * @return the measurements, one per step
         * @throws BenchFailure when the job failed (its ranks already said why)
         */
        List<Measurement> run(String transport, Collective collective, ElementType type, Memory memory,
                              List<Step> steps, SliceGate gate) throws InterruptedException;
    }

    /** A Kolo run that failed; the message says how. */
    public static final class BenchFailure extends RuntimeException {
        private static final long serialVersionUID = 1L;

        public BenchFailure(String message) {
            super(message);
        }
    }

    /**
     * @param slices with {@code compare}: Kolo over shared memory and Open MPI over shared memory take turns at every
     *               size, this many times each ({@link SliceGate})
     * @param memory where Kolo's tensors live; the peers always use their own native buffers
     * @param hosts  the hosts the ranks run on, or null: all on this machine
     */
    public record Config(Collective collective, int ranks, long[] sizes, ElementType type, Memory memory, int iterations,
                         int warmup, List<String> transports, boolean compare, int slices, Duration peerTimeout,
                         String commandLine, BenchHosts hosts) {
        /** Every rank on this machine. */
        public Config(Collective collective, int ranks, long[] sizes, ElementType type, Memory memory, int iterations,
                      int warmup, List<String> transports, boolean compare, int slices, Duration peerTimeout,
                      String commandLine) {
            this(collective, ranks, sizes, type, memory, iterations, warmup, transports, compare, slices, peerTimeout,
                    commandLine, null);
        }
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
        List<Peer> peers = config.compare() ? peers(config, env, cache) : List.of();
        // Peer series measured while taking turns with Kolo, by peer name.
        Map<String, Series> measured = new LinkedHashMap<>();
        for (String transport : config.transports()) {
            String name = config.memory().seriesName(transport);
            if (config.compare() && transport.equals("shm")) {
                Peer partner = peers.getFirst();   // Open MPI over shared memory, the series Kolo shm is compared with
                progress.printf(Locale.ROOT, "kolo bench: %s and %s taking turns, %d slices each per size, %s on %d"
                        + " ranks, %d sizes...%n", name, partner.name(), config.slices(), config.collective().id(),
                        config.ranks(), steps.size());
                TakingTurns turns = takeTurns(config, kolo, partner, steps, series);
                measured.put(partner.name(), turns.series());
                continue;
            }
            progress.printf(Locale.ROOT, "kolo bench: %s, %s on %d ranks, %d sizes...%n", name,
                    config.collective().id(), config.ranks(), steps.size());
            series.add(Series.ok(name, kolo.run(transport, config.collective(), config.type(), config.memory(), steps,
                    null)));
        }
        List<Comparison> comparisons = new ArrayList<>();
        for (Peer peer : peers) {
            Series s = measured.get(peer.name());
            if (s == null) {
                progress.printf(Locale.ROOT, "kolo bench: %s...%n", peer.name());
                s = peer.run(config.collective(), config.type(), config.ranks(), steps);
            }
            if (s.status() != Series.Status.OK) {
                progress.printf(Locale.ROOT, "kolo bench: %s %s: %s%n", peer.name(),
                        s.status() == Series.Status.SKIPPED ? "skipped" : "FAILED", s.reason());
            }
            series.add(s);
            comparisons.add(new Comparison(counterpart(peer.name(), config.transports(), config.memory()),
                    peer.name()));
        }
        Map<String, String> machine = describeMachine();
        // Timings on a busy machine are not comparable with a quiet one's: record how busy it was.
        machine.put("loadavg_start", loadBefore);
        machine.put("loadavg_end", loadAverage());
        if (config.hosts() != null) {
            // The figures above describe the launcher's machine; the ranks ran here.
            machine.put("hosts", config.hosts().hostList());
            if (config.hosts().networkInterface() != null) {
                machine.put("network_interface", config.hosts().networkInterface());
            }
        }
        return new Report(config.collective(), config.ranks(), config.type(), config.commandLine(), steps, series,
                comparisons, machine);
    }

    /** The peers --compare runs: on this machine all three; on given hosts Open MPI over TCP on the same hosts. */
    static List<Peer> peers(Config config, Map<String, String> env, BenchCache cache) {
        if (config.hosts() == null) {
            return List.of(new OpenMpiPeer("vader", env, cache, config.peerTimeout()),
                    new OpenMpiPeer("tcp", env, cache, config.peerTimeout()),
                    new GlooPeer(env, cache, config.peerTimeout()));
        }
        return List.of(Peer.skipped("OMPI shm", "with -H or --hostfile kolo bench compares TCP only"),
                new OpenMpiPeer("tcp", env, cache, config.peerTimeout(), config.hosts()),
                Peer.skipped("Gloo", "gloo_bench.py starts its ranks on this machine only, not on the given hosts"));
    }

    /**
     * The Kolo series a peer is compared with: shared memory with shared memory, TCP with TCP (Gloo talks
     * TCP), else whatever Kolo ran.
     */
    static String counterpart(String peer, List<String> transports, Memory memory) {
        String wanted = peer.endsWith("shm") ? "shm" : "tcp";
        if (transports.contains(wanted)) {
            return memory.seriesName(wanted);
        }
        return memory.seriesName(transports.contains("auto") ? "auto" : transports.getFirst());
    }

    /**
     * Kolo over shared memory with {@code partner} taking turns at every size; adds Kolo's series to {@code series} and
     * returns the turns, whose {@link TakingTurns#series()} is the partner's.
     */
    private static TakingTurns takeTurns(Config config, KoloRunner kolo, Peer partner, List<Step> steps,
                                         List<Series> series) throws InterruptedException {
        Path dir = tempDirectory();
        try {
            SliceGate gate = new SliceGate(dir, config.slices());
            TakingTurns turns = new TakingTurns(gate, partner, config.collective(), config.type(), config.ranks(),
                    steps);
            Thread harness = Thread.ofPlatform().daemon().name("kolo-bench-turns").start(turns);
            try {
                series.add(Series.ok(config.memory().seriesName("shm"), kolo.run("shm", config.collective(),
                        config.type(), config.memory(), steps, gate)));
            } finally {
                turns.stop();
                harness.join();
            }
            return turns;
        } finally {
            deleteQuietly(dir);
        }
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
