package io.kolo.launcher.tools;

import io.kolo.launcher.Subcommand;
import io.kolo.launcher.job.Hosts;
import io.kolo.launcher.job.RankEnvironment;
import io.kolo.launcher.job.StaticPlan;
import io.kolo.launcher.job.UsageException;

import io.kolo.Communicator;
import io.kolo.bench.BenchHosts;
import io.kolo.bench.BenchSuite;
import io.kolo.bench.BenchWorker;
import io.kolo.bench.Collective;
import io.kolo.bench.ElementType;
import io.kolo.bench.Memory;
import io.kolo.bench.Plot;
import io.kolo.bench.Report;
import io.kolo.bench.Sizes;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.io.File;
import java.io.PrintStream;
import java.net.URISyntaxException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

@Command(name = "bench", addMethodSubcommands = false, sortOptions = false, separator = " ",
        subcommands = ScaleCommand.class,
        description = "Measure a collective's latency and bus bandwidth per message size on N ranks (on this"
                + " machine, or on hosts over ssh as kolo run starts them), optionally against Open MPI and Gloo.",
        customSynopsis = {
                "kolo bench allreduce|allgather|broadcast|alltoall|reducescatter",
                "           [-np N] [-H HOSTS | --hostfile FILE] [-p PORT] [-i KEY]",
                "           [--network-interface IF] [--sizes 8B..256MiB] [--dtype f32|f64|bf16|f16|i32|i64]",
                "           [--iters N] [--warmup N] [--transport auto|shm|tcp]",
                "           [--bind-to core|none] [--compare] [--slices N]",
                "           [--json FILE] [--plot FILE.svg|FILE.png] [-x VAR=VALUE]...",
                "kolo bench scale [--max-ranks N] [--mode auto|processes|threads] ... (see kolo bench scale --help)"},
        footer = {"", "Bus bandwidth = algorithm bandwidth (bytes / time) x 2(N-1)/N for allreduce,",
                "(N-1)/N for allgather, reducescatter and alltoall, 1 for broadcast (as",
                "nccl-tests). Times are per operation, the slowest rank's, over the measured",
                "iterations. See docs/performance.md."})
public final class BenchCommand implements Subcommand {
    // Optional to picocli only so that "kolo bench scale" parses; config() requires it.
    @Parameters(index = "0", arity = "0..1", paramLabel = "COLLECTIVE",
            description = "allreduce, allgather, broadcast, alltoall or reducescatter (or scale: see kolo bench"
                    + " scale --help).")
    String collective;

    @Option(names = "-np", paramLabel = "N", description = "Number of ranks (default: 2, with -H or --hostfile every slot).")
    Integer np;

    @Option(names = {"-H", "--hosts"}, paramLabel = "HOSTS",
            description = "Run the ranks on these hosts, host:N[,host:N...], over ssh as kolo run does; with --compare"
                    + " Open MPI runs on the same hosts over TCP.")
    String hosts;

    @Option(names = "--hostfile", paramLabel = "FILE", description = "Hosts from a hostfile ('host slots=N' or 'host:N').")
    Path hostfile;

    @Option(names = {"-p", "--ssh-port"}, paramLabel = "PORT", description = "ssh port of the remote hosts.")
    Integer sshPort;

    @Option(names = {"-i", "--ssh-identity-file"}, paramLabel = "KEY", description = "ssh private key file.")
    Path sshIdentityFile;

    @Option(names = "--network-interface", paramLabel = "IF",
            description = "Interface for Kolo's rendezvous and data (kolo run's option); with --compare across hosts"
                    + " Open MPI's TCP is restricted to it too.")
    String networkInterface;

    @Option(names = "--sizes", paramLabel = "SIZES", defaultValue = Sizes.DEFAULT,
            description = "Message sizes: 8B..256MiB (doubling), 1KiB..1MiB:4, or a list 1KiB,4MiB (default: ${DEFAULT-VALUE}).")
    String sizes = Sizes.DEFAULT;

    @Option(names = "--dtype", paramLabel = "TYPE", defaultValue = "f32", description = "f32, f64, bf16, f16, i32 or i64 (default: ${DEFAULT-VALUE}).")
    String dtype = "f32";

    @Option(names = "--memory", paramLabel = "WHERE", defaultValue = "native",
            description = "native or heap: Kolo's tensors in off-heap memory or in Java arrays, as Kolo.allreduce(float[])"
                    + " takes them (default: ${DEFAULT-VALUE}).")
    String memory = "native";

    @Option(names = "--fresh-input",
            description = "Every Kolo rank writes new values into its input before each timed op (not timed), as a"
                    + " program that broadcasts new parameters does. Without it a broadcast's root sends the same"
                    + " unchanged memory every time. Not with --compare: the peers reuse their input.")
    boolean freshInput;

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

    /** The number of ranks, once {@link #config} has planned them. */
    private int ranks;

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
        BenchSuite.KoloRunner runner = new BenchRanks(placement(), env, err, installShutdownHook);
        Report report;
        try {
            report = BenchSuite.run(config, runner, env, err);
        } catch (BenchSuite.BenchFailure e) {
            err.println("kolo: bench failed: " + e.getMessage());
            return 1;
        }
        out.print(report.table());
        out.flush();
        return OutputFile.writeResults("kolo bench", json, report.json(), plot, new Plot(report)::write, err);
    }

    /** Validates everything before any rank starts, so bad input fails at once with one line. */
    BenchSuite.Config config(Map<String, String> env) {
        try {
            if (collective == null) {
                throw new UsageException("Missing required parameter: 'COLLECTIVE' (see 'kolo bench --help')");
            }
            Collective c = Collective.parse(collective);
            if (np != null && np < 1) {
                throw new UsageException("-np must be at least 1, got " + np);
            }
            if (!givenHosts() && (sshPort != null || sshIdentityFile != null)) {
                throw new UsageException("-p and -i are for the hosts of -H or --hostfile; give the hosts too");
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
            if (freshInput && compare) {
                throw new UsageException("--fresh-input is for Kolo's own runs: the peers of --compare reuse their"
                        + " input, so the two would not be measured alike; drop one of them");
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
            OutputFile.checkWritable("--json", json);
            OutputFile.checkWritable("--plot", plot);
            // kolo run's own checks of -np, the hosts, ssh and -x, on the plan the ranks will start from.
            StaticPlan plan = BenchRanks.plan(placement(), BenchRanks.workerCommand(c, type, where, List.of()),
                    env);
            BenchHosts placed = givenHosts() ? BenchRanks.hosts(plan, env) : null;
            ranks = plan.np();
            BenchSuite.Config config = new BenchSuite.Config(c, ranks, parsedSizes, type, where,
                    iterations == null ? -1 : iterations, warmup == null ? -1 : warmup, transports(placed),
                    compare, slices, Duration.ofSeconds(peerTimeoutSeconds), commandLine(), placed);
            BenchSuite.steps(config);
            return config;
        } catch (IllegalArgumentException e) {
            throw new UsageException(e.getMessage());
        }
    }

    /** Whether the ranks run on hosts given by -H or --hostfile (else all on this machine). */
    boolean givenHosts() {
        return hosts != null || hostfile != null;
    }

    /**
     * kolo run's options for the ranks' placement: -np, the hosts and how to reach them, --bind-to, -x. Without
     * -H or --hostfile, -np ranks on this machine.
     */
    List<String> placement() {
        List<String> args = new ArrayList<>();
        if (np != null || !givenHosts()) {
            args.addAll(List.of("-np", Integer.toString(np != null ? np : 2)));
        }
        args.addAll(hostOptions());
        args.addAll(List.of("--bind-to", bindTo));
        if (freshInput) {
            args.addAll(List.of("-x", BenchWorker.FRESH_INPUT + "=1"));
        }
        for (String x : exports) {
            args.addAll(List.of("-x", x));
        }
        return args;
    }

    /** Local ranks: {@link #transports(BenchHosts)} for this machine. */
    List<String> transports() {
        return transports(null);
    }

    /**
     * The Kolo series to run: the chosen transport, plus TCP when comparing (the peer for Gloo and MPI's TCP). On
     * given hosts, --compare measures TCP against Open MPI's TCP; {@code auto} is left out where it is TCP anyway
     * (one rank per host).
     */
    List<String> transports(BenchHosts where) {
        if (!TRANSPORTS.contains(transport)) {
            throw new UsageException("--transport " + transport + ": use auto, shm or tcp");
        }
        if (where != null) {
            if (transport.equals("shm") && where.spansHosts()) {
                throw new UsageException("--transport shm: the ranks run on " + where.slots().size()
                        + " hosts, which share no memory; use auto or tcp");
            }
            if (!compare) {
                return List.of(transport);
            }
            Set<String> list = new LinkedHashSet<>();
            if (!(transport.equals("auto") && where.oneRankPerHost())) {
                list.add(transport);
            }
            list.add("tcp");
            return List.copyOf(list);
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

    /** The host, ssh and interface options as given, for kolo run's plan and for the recorded command line. */
    private List<String> hostOptions() {
        List<String> args = new ArrayList<>();
        if (hosts != null) {
            args.addAll(List.of("-H", hosts));
        }
        if (hostfile != null) {
            args.addAll(List.of("--hostfile", hostfile.toString()));
        }
        if (sshPort != null) {
            args.addAll(List.of("-p", sshPort.toString()));
        }
        if (sshIdentityFile != null) {
            args.addAll(List.of("-i", sshIdentityFile.toString()));
        }
        if (networkInterface != null) {
            args.addAll(List.of("--network-interface", networkInterface));
        }
        return args;
    }

    private String commandLine() {
        List<String> words = new ArrayList<>(List.of("./kolo", "bench", collective, "-np", Integer.toString(ranks)));
        words.addAll(hostOptions());
        if (!sizes.equals(Sizes.DEFAULT)) {
            words.addAll(List.of("--sizes", sizes));
        }
        if (!dtype.equals("f32")) {
            words.addAll(List.of("--dtype", dtype));
        }
        if (!memory.equals("native")) {
            words.addAll(List.of("--memory", memory));
        }
        if (freshInput) {
            words.add("--fresh-input");
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
