package io.kolo.launcher.tools;

import io.kolo.launcher.Subcommand;
import io.kolo.launcher.job.RankEnvironment;
import io.kolo.launcher.job.UsageException;

import io.kolo.bench.ScaleBench;
import io.kolo.bench.ScalePlot;
import io.kolo.bench.ScaleReport;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

@Command(name = "scale", addMethodSubcommands = false, sortOptions = false, separator = " ",
        description = "Start real jobs of 2, 4, 8, ... ranks on this machine (real rendezvous store, handshakes and"
                + " transport) and measure how start-up time, allreduce latency, store traffic, descriptors and"
                + " memory per rank grow with the number of ranks.",
        customSynopsis = {"kolo bench scale [--min-ranks N] [--max-ranks N] [--mode auto|processes|threads]",
                "                 [--max-processes N] [--step-timeout S] [--transport tcp|shm|auto]",
                "                 [--json FILE] [--plot FILE.svg|FILE.png]"},
        footer = {"", "Ranks run as processes up to --max-processes (auto), as threads of this",
                "JVM beyond, each its own Communicator over loopback. Growing stops at the",
                "first step that fails or takes longer than --step-timeout; the JSON records",
                "why. See docs/scaling.md."})
final class ScaleCommand implements Subcommand {
    @Option(names = "--min-ranks", paramLabel = "N", defaultValue = "2",
            description = "Smallest job; sizes double from it (default: ${DEFAULT-VALUE}).")
    int minRanks = 2;

    @Option(names = "--max-ranks", paramLabel = "N", defaultValue = "1024",
            description = "Largest job (default: ${DEFAULT-VALUE}).")
    int maxRanks = 1024;

    @Option(names = "--mode", paramLabel = "MODE", defaultValue = "auto",
            description = "processes, threads, or auto: processes up to --max-processes, threads beyond (default:"
                    + " ${DEFAULT-VALUE}).")
    String mode = "auto";

    @Option(names = "--max-processes", paramLabel = "N", defaultValue = "16",
            description = "With --mode auto: the largest job run as processes (default: ${DEFAULT-VALUE}).")
    int maxProcesses = 16;

    @Option(names = "--step-timeout", paramLabel = "S", defaultValue = "120",
            description = "Seconds one job size may take before growing stops (default: ${DEFAULT-VALUE}).")
    int stepTimeoutSeconds = 120;

    @Option(names = "--transport", paramLabel = "T", defaultValue = "tcp",
            description = "The ranks' KOLO_TRANSPORT: tcp (a connection per pair of ranks that exchange, default), shm or auto.")
    String transport = "tcp";

    @Option(names = "--json", paramLabel = "FILE", description = "Write the results as JSON.")
    Path json;

    @Option(names = "--plot", paramLabel = "FILE", description = "Plot every figure against the ranks, log-log, to"
            + " FILE.svg or FILE.png.")
    Path plot;

    @Option(names = {"-h", "--help"}, usageHelp = true, description = "Show this help and exit.")
    boolean help;

    @Override
    public int call(PrintStream out, PrintStream err, boolean installShutdownHook) throws InterruptedException {
        ScaleBench.Config config;
        try {
            if (stepTimeoutSeconds < 1) {
                throw new IllegalArgumentException("--step-timeout must be at least 1 second, got "
                        + stepTimeoutSeconds);
            }
            if (minRanks < 2) {
                throw new IllegalArgumentException("--min-ranks must be at least 2, got " + minRanks);
            }
            config = new ScaleBench.Config(minRanks, maxRanks, ScaleBench.Mode.parse(mode), maxProcesses,
                    Duration.ofSeconds(stepTimeoutSeconds), transport, BenchCommand.workerClasspath(), commandLine());
            if (plot != null) {
                io.kolo.bench.Plot.checkName(plot);
            }
        } catch (IllegalArgumentException e) {
            throw new UsageException(e.getMessage());
        }
        OutputFile.checkWritable("--json", json);
        OutputFile.checkWritable("--plot", plot);
        ScaleReport report = ScaleBench.run(config, err);
        out.print(report.table());
        out.flush();
        return OutputFile.writeResults("kolo bench scale", json, report.json(), plot, new ScalePlot(report)::write,
                err);
    }

    private String commandLine() {
        List<String> words = new ArrayList<>(List.of("./kolo", "bench", "scale"));
        if (minRanks != 2) {
            words.addAll(List.of("--min-ranks", Integer.toString(minRanks)));
        }
        words.addAll(List.of("--max-ranks", Integer.toString(maxRanks)));
        if (!mode.equals("auto")) {
            words.addAll(List.of("--mode", mode));
        }
        if (maxProcesses != 16) {
            words.addAll(List.of("--max-processes", Integer.toString(maxProcesses)));
        }
        if (stepTimeoutSeconds != 120) {
            words.addAll(List.of("--step-timeout", Integer.toString(stepTimeoutSeconds)));
        }
        if (!transport.equals("tcp")) {
            words.addAll(List.of("--transport", transport));
        }
        return RankEnvironment.shellQuote(words);
    }
}
