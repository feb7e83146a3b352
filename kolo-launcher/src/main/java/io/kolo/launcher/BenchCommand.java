package io.kolo.launcher;

import io.kolo.Communicator;
import io.kolo.bench.BenchSuite;
import io.kolo.bench.BenchWorker;
import io.kolo.bench.Collective;
import io.kolo.bench.ElementType;
import io.kolo.bench.Measurement;
import io.kolo.bench.Memory;
import io.kolo.bench.Plot;
import io.kolo.bench.Report;
import io.kolo.bench.SliceGate;
import io.kolo.bench.Sizes;
import io.kolo.bench.Step;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.io.File;
import java.io.IOException;
import java.io.PrintStream;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

@Command(name = "bench", sortOptions = false, separator = " ",
        description = "Measure a collective's latency and bus bandwidth per message size on N local ranks,"
                + " optionally against Open MPI and Gloo.",
        customSynopsis = {
                "kolo bench allreduce|allgather|broadcast|alltoall|reducescatter",
                "           [-np N] [--sizes 8B..256MiB] [--dtype f32|f64|bf16|f16]",
                "           [--iters N] [--warmup N] [--transport auto|shm|tcp]",
                "           [--bind-to core|none] [--compare] [--slices N]",
                "           [--json FILE] [--plot FILE.svg|FILE.png] [-x VAR=VALUE]..."},
        footer = {"", "Bus bandwidth = algorithm bandwidth (bytes / time) x 2(N-1)/N for allreduce,",
                "(N-1)/N for allgather, reducescatter and alltoall, 1 for broadcast (as",
                "nccl-tests). Times are per operation, the slowest rank's, over the measured",
                "iterations. See docs/performance.md."})
final class BenchCommand implements Subcommand {
    @Parameters(index = "0", paramLabel = "COLLECTIVE",
            description = "allreduce, allgather, broadcast, alltoall or reducescatter.")
    String collective;

    @Option(names = "-np", paramLabel = "N", defaultValue = "2", description = "Number of ranks (default: ${DEFAULT-VALUE}).")
    int np = 2;

    @Option(names = "--sizes", paramLabel = "SIZES", defaultValue = Sizes.DEFAULT,
            description = "Message sizes: 8B..256MiB (doubling), 1KiB..1MiB:4, or a list 1KiB,4MiB (default: ${DEFAULT-VALUE}).")
    String sizes = Sizes.DEFAULT;

    @Option(names = "--dtype", paramLabel = "TYPE", defaultValue = "f32", description = "f32, f64, bf16 or f16 (default: ${DEFAULT-VALUE}).")
    String dtype = "f32";

    @Option(names = "--memory", paramLabel = "WHERE", defaultValue = "native",
            description = "native or heap: Kolo's tensors in off-heap memory or in Java arrays, as Kolo.allreduce(float[])"
                    + " takes them (default: ${DEFAULT-VALUE}).")
    String memory = "native";

    @Option(names = "--iters", paramLabel = "N", description = "Measured iterations per size (default: 2000 for small sizes down to 5 for large).")
    Integer iterations;

    @Option(names = "--warmup", paramLabel = "N", description = "Warm-up iterations per size (default: a fifth of --iters, at least 2).")
    Integer warmup;

    @Option(names = "--transport", paramLabel = "T", defaultValue = "auto",
            description = "auto, shm or tcp: Kolo's transport between local ranks (KOLO_TRANSPORT, default: ${DEFAULT-VALUE}).")
    String transport = "auto";

    @Option(names = "--bind-to", paramLabel = "WHAT", defaultValue = "core",
            description = "core or none: pin each Kolo rank to one CPU (KOLO_BIND_TO). The default, core, is what"
                    + " Open MPI's mpirun does by default for 2 ranks, so both are measured placed alike.")
    String bindTo = "core";

    @Option(names = "--compare", description = "Also measure Open MPI (shm and TCP) and Gloo on the same sizes; missing ones are skipped.")
    boolean compare;

    @Option(names = "--slices", paramLabel = "N", defaultValue = "2",
            description = "With --compare: Kolo and Open MPI over shared memory take turns at every size, N times each,"
                    + " so both meet the machine in the same state (default: ${DEFAULT-VALUE}).")
    int slices = 2;

    @Option(names = "--json", paramLabel = "FILE", description = "Write the results as JSON.")
    Path json;

    @Option(names = "--plot", paramLabel = "FILE", description = "Plot bus bandwidth vs size to FILE.svg or FILE.png.")
    Path plot;

    @Option(names = "--peer-timeout", paramLabel = "S", defaultValue = "600",
            description = "Seconds each peer run may take (default: ${DEFAULT-VALUE}).")
    int peerTimeoutSeconds = 600;

    @Option(names = "-x", paramLabel = "VAR[=VALUE]", description = "Set VAR in every Kolo rank (e.g. KOLO_CYCLE_TIME=0.5). Repeatable.")
    List<String> exports = new ArrayList<>();

    @Option(names = {"-h", "--help"}, usageHelp = true, description = "Show this help and exit.")
    boolean help;

    static final Set<String> TRANSPORTS = Set.of("auto", "shm", "tcp");

    @Override
    public int call(PrintStream out, PrintStream err, boolean installShutdownHook) throws InterruptedException {
        return execute(System.getenv(), out, err, installShutdownHook);
    }

    /** {@code env}: where peers are looked for (PATH, KOLO_BENCH_PYTHON) and what -x VAR forwards. */
    int execute(Map<String, String> env, PrintStream out, PrintStream err, boolean installShutdownHook)
            throws InterruptedException {
        BenchSuite.Config config = config(env);
        // Checked once here so bad -x input fails before anything runs; each Kolo run repeats any warning.
        Map<String, String> exported = RankEnvironment.exports(exports, env, new ArrayList<>());
        if (exported.containsKey("KOLO_TRANSPORT")) {
            throw new UsageException("-x KOLO_TRANSPORT: use --transport instead");
        }
        BenchSuite.KoloRunner runner = (t, c, type, mem, steps, gate) -> runKolo(t, c, type, mem, steps, gate, env,
                err, installShutdownHook);
        Report report;
        try {
            report = BenchSuite.run(config, runner, env, err);
        } catch (BenchSuite.BenchFailure e) {
            err.println("kolo: bench failed: " + e.getMessage());
            return 1;
        }
        out.print(report.table());
        out.flush();
        try {
            if (json != null) {
                if (json.getParent() != null) {
                    Files.createDirectories(json.getParent());
                }
                Files.writeString(json, report.json());
                err.println("kolo bench: wrote " + json);
            }
            if (plot != null) {
                new Plot(report).write(plot);
                err.println("kolo bench: wrote " + plot);
            }
        } catch (IOException e) {
            err.println("kolo: cannot write results: " + e.getMessage());
            return 1;
        }
        return 0;
    }

    /** Validates everything before any rank starts, so bad input fails at once with one line. */
    BenchSuite.Config config(Map<String, String> env) {
        try {
            Collective c = Collective.parse(collective);
            if (np < 1) {
                throw new UsageException("-np must be at least 1, got " + np);
            }
            long[] parsedSizes = Sizes.parse(sizes);
            ElementType type = ElementType.parse(dtype);
            Memory where = Memory.parse(memory);
            if (iterations != null && iterations < 1) {
                throw new UsageException("--iters must be at least 1, got " + iterations);
            }
            if (warmup != null && warmup < 0) {
                throw new UsageException("--warmup must be 0 or more, got " + warmup);
            }
            if (slices < 1) {
                throw new UsageException("--slices must be at least 1, got " + slices);
            }
            if (peerTimeoutSeconds < 1) {
                throw new UsageException("--peer-timeout must be at least 1 second, got " + peerTimeoutSeconds);
            }
            if (plot != null) {
                Plot.checkName(plot);
            }
            BenchSuite.Config config = new BenchSuite.Config(c, np, parsedSizes, type, where,
                    iterations == null ? -1 : iterations, warmup == null ? -1 : warmup, transports(),
                    compare, slices, Duration.ofSeconds(peerTimeoutSeconds), commandLine());
            BenchSuite.steps(config);
            return config;
        } catch (IllegalArgumentException e) {
            throw new UsageException(e.getMessage());
        }
    }

    /** The Kolo series to run: the chosen transport, plus TCP when comparing (the peer for Gloo and MPI's TCP). */
    List<String> transports() {
        if (!TRANSPORTS.contains(transport)) {
            throw new UsageException("--transport " + transport + ": use auto, shm or tcp");
        }
        if (transport.equals("shm") && !shmAvailable()) {
            throw new UsageException("--transport shm: this build of Kolo has no shared-memory transport yet;"
                    + " use --transport tcp");
        }
        Set<String> list = new LinkedHashSet<>();
        if (!compare) {
            list.add(transport);
        } else {
            if (transport.equals("shm") || (transport.equals("auto") && shmAvailable())) {
                list.add("shm");
            }
            list.add(transport.equals("auto") ? "tcp" : transport);
            list.add("tcp");
        }
        return List.copyOf(list);
    }

    /** Whether kolo-core has a shared-memory transport (KOLO_TRANSPORT=shm). */
    static boolean shmAvailable() {
        try {
            Class.forName("io.kolo.transport.ShmTransport", false, BenchCommand.class.getClassLoader());
            return true;
        } catch (ClassNotFoundException e) {
            return false;
        }
    }

    private String commandLine() {
        List<String> words = new ArrayList<>(List.of("./kolo", "bench", collective, "-np", Integer.toString(np)));
        if (!sizes.equals(Sizes.DEFAULT)) {
            words.addAll(List.of("--sizes", sizes));
        }
        if (!dtype.equals("f32")) {
            words.addAll(List.of("--dtype", dtype));
        }
        if (!memory.equals("native")) {
            words.addAll(List.of("--memory", memory));
        }
        if (iterations != null) {
            words.addAll(List.of("--iters", iterations.toString()));
        }
        if (warmup != null) {
            words.addAll(List.of("--warmup", warmup.toString()));
        }
        if (!transport.equals("auto")) {
            words.addAll(List.of("--transport", transport));
        }
        if (!bindTo.equals("core")) {
            words.addAll(List.of("--bind-to", bindTo));
        }
        if (compare) {
            words.add("--compare");
        }
        if (compare && slices != 2) {
            words.addAll(List.of("--slices", Integer.toString(slices)));
        }
        for (String x : exports) {
            words.addAll(List.of("-x", x));
        }
        return RankEnvironment.shellQuote(words);
    }

    private List<Measurement> runKolo(String transport, Collective c, ElementType type, Memory where, List<Step> steps,
                                      SliceGate gate, Map<String, String> env, PrintStream err,
                                      boolean installShutdownHook)
            throws InterruptedException {
        Path results;
        try {
            results = Files.createTempFile("kolo-bench-", ".txt");
        } catch (IOException e) {
            throw new BenchSuite.BenchFailure("cannot create a temporary file: " + e.getMessage());
        }
        try {
            // Planned by kolo run's own option parsing, so the ranks start exactly as 'kolo run -cp ...' would.
            List<String> runArgs = new ArrayList<>(List.of("-np", Integer.toString(np), "-x", "KOLO_TRANSPORT=" + transport,
                    "--bind-to", bindTo));
            for (String x : exports) {
                runArgs.addAll(List.of("-x", x));
            }
            if (gate != null) {
                gate.variables().forEach((k, v) -> runArgs.addAll(List.of("-x", k + "=" + v)));
            }
            runArgs.addAll(List.of("-cp", workerClasspath(), "--", BenchWorker.class.getName(), c.id(), type.id(),
                    Step.format(steps), results.toString(), where.id()));
            RunCommand run = new RunCommand();
            new CommandLine(run).setExpandAtFiles(false).parseArgs(runArgs.toArray(String[]::new));
            RunCommand.Plan plan = run.plan(env, Hosts.localNames());
            // The ranks' progress goes to stderr so stdout carries only the table.
            int code = JobStart.execute(plan, err, err, installShutdownHook);
            if (code != 0) {
                throw new BenchSuite.BenchFailure("the Kolo ranks (KOLO_TRANSPORT=" + transport
                        + ") exited with code " + code + "; their output above says why");
            }
            List<Measurement> measurements = new ArrayList<>();
            for (String line : Files.readAllLines(results)) {
                Measurement.parseLine(line).ifPresent(measurements::add);
            }
            if (measurements.size() != steps.size()) {
                throw new BenchSuite.BenchFailure("the Kolo ranks reported " + measurements.size() + " of "
                        + steps.size() + " sizes");
            }
            return measurements;
        } catch (IOException e) {
            throw new BenchSuite.BenchFailure("cannot read the results: " + e.getMessage());
        } finally {
            try {
                Files.deleteIfExists(results);
            } catch (IOException ignored) {
                // A temporary file left behind is harmless.
            }
        }
    }

    /** kolo-bench and kolo-core, wherever this launcher loaded them from (jars in target/lib, or classes dirs). */
    static String workerClasspath() {
        List<String> entries = new ArrayList<>();
        for (Class<?> c : List.of(BenchWorker.class, Communicator.class)) {
            try {
                entries.add(Path.of(c.getProtectionDomain().getCodeSource().getLocation().toURI()).toString());
            } catch (URISyntaxException | RuntimeException e) {
                throw new UsageException("cannot locate " + c.getName() + " for the bench ranks: " + e.getMessage());
            }
        }
        return String.join(File.pathSeparator, entries);
    }
}
