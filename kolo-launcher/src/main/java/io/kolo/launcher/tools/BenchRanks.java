package io.kolo.launcher.tools;

import io.kolo.launcher.RunCommand;
import io.kolo.launcher.job.Hosts;
import io.kolo.launcher.job.JobStart;
import io.kolo.launcher.job.StaticPlan;
import io.kolo.launcher.job.UsageException;
import io.kolo.launcher.start.Ssh;

import io.kolo.bench.BenchHosts;
import io.kolo.bench.BenchSuite;
import io.kolo.bench.BenchWorker;
import io.kolo.bench.Collective;
import io.kolo.bench.ElementType;
import io.kolo.bench.Measurement;
import io.kolo.bench.Memory;
import io.kolo.bench.SliceGate;
import io.kolo.bench.Step;
import picocli.CommandLine;

import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Starts {@code kolo bench}'s Kolo ranks exactly as {@code kolo run -cp ...} would: the run is planned by kolo run's
 * own option parsing from {@code placement} ({@code -np}, hosts, ssh and interface options, {@code --bind-to},
 * {@code -x}), so ranks on other hosts start over ssh as a job's do. Rank 0 prints its results on its standard
 * output ({@link BenchWorker#RESULT_PREFIX}), which reaches the launcher from whichever host it runs on; every other
 * line of the ranks' output goes to {@code err}, so stdout carries only the table.
 */
final class BenchRanks implements BenchSuite.KoloRunner {
    private static final String RESULT_LINE = "[0]<stdout>:" + BenchWorker.RESULT_PREFIX;

    private final List<String> placement;
    private final Map<String, String> env;
    private final PrintStream err;
    private final boolean installShutdownHook;

    BenchRanks(List<String> placement, Map<String, String> env, PrintStream err, boolean installShutdownHook) {
        this.placement = List.copyOf(placement);
        this.env = env;
        this.err = err;
        this.installShutdownHook = installShutdownHook;
    }

    /** kolo run's plan for {@code placement} followed by {@code rest}; throws {@link UsageException} for bad input. */
    static StaticPlan plan(List<String> placement, List<String> rest, Map<String, String> env) {
        List<String> args = new ArrayList<>(placement);
        args.addAll(rest);
        RunCommand run = new RunCommand();
        try {
            new CommandLine(run).setExpandAtFiles(false).parseArgs(args.toArray(String[]::new));
        } catch (CommandLine.ParameterException e) {
            throw new UsageException(e.getMessage());
        }
        return run.plan(env, Hosts.localNames());
    }

    /**
     * The hosts as the Open MPI peer needs them: {@code host:ranks} in rank order, the interface unless it is an
     * address (one host's own), and the ssh client and options kolo run uses.
     */
    static BenchHosts hosts(StaticPlan plan, Map<String, String> env) {
        Map<String, Integer> perHost = new LinkedHashMap<>();
        plan.slots().forEach(s -> perHost.merge(s.host(), 1, Integer::sum));
        List<String> slots = new ArrayList<>();
        perHost.forEach((host, n) -> slots.add(host + ":" + n));
        String iface = plan.networkInterface();
        if (iface != null && (iface.indexOf(':') >= 0 || iface.matches("\\d{1,3}(\\.\\d{1,3}){3}"))) {
            iface = null;
        }
        String custom = env.get(Ssh.COMMAND_VAR);
        String agent = custom == null || custom.isBlank() ? null : custom.strip();
        List<String> sshArgs = new ArrayList<>();
        if (plan.ssh().port() > 0) {
            sshArgs.addAll(List.of("-p", Integer.toString(plan.ssh().port())));
        }
        if (plan.ssh().identityFile() != null) {
            sshArgs.addAll(List.of("-i", plan.ssh().identityFile().toAbsolutePath().toString()));
        }
        String bindTo = plan.exports().getOrDefault("KOLO_BIND_TO", "none");
        return new BenchHosts(slots, iface, agent, sshArgs, bindTo);
    }

    /** The worker's command after kolo run's options: its class path, class and arguments (results to stdout). */
    static List<String> workerCommand(Collective c, ElementType type, Memory where, List<Step> steps) {
        return List.of("-cp", BenchCommand.workerClasspath(), "--", BenchWorker.class.getName(), c.id(), type.id(),
                Step.format(steps), "-", where.id());
    }

    @Override
    public List<Measurement> run(String transport, Collective c, ElementType type, Memory where, List<Step> steps,
                                 SliceGate gate) throws InterruptedException {
        List<String> rest = new ArrayList<>(List.of("-x", "KOLO_TRANSPORT=" + transport));
        if (gate != null) {
            gate.variables().forEach((k, v) -> rest.addAll(List.of("-x", k + "=" + v)));
        }
        rest.addAll(workerCommand(c, type, where, steps));
        StaticPlan plan = plan(placement, rest, env);
        Results results = new Results(err);
        int code;
        try (PrintStream out = new PrintStream(results, true, StandardCharsets.UTF_8)) {
            code = JobStart.execute(plan, out, err, installShutdownHook);
        }
        if (code != 0) {
            throw new BenchSuite.BenchFailure("the Kolo ranks (KOLO_TRANSPORT=" + transport
                    + ") exited with code " + code + "; their output above says why");
        }
        List<Measurement> measurements = results.measurements();
        if (measurements.size() != steps.size()) {
            throw new BenchSuite.BenchFailure("the Kolo ranks reported " + measurements.size() + " of "
                    + steps.size() + " sizes");
        }
        return measurements;
    }

    /** The ranks' tagged stdout: rank 0's result lines are kept, every other line goes on to {@code err}. */
    static final class Results extends OutputStream {
        private final PrintStream err;
        private final ByteArrayOutputStream line = new ByteArrayOutputStream();
        private final List<Measurement> measurements = new ArrayList<>();

        Results(PrintStream err) {
            this.err = err;
        }

        @Override
        public synchronized void write(int b) {
            if (b == '\n') {
                endLine();
            } else {
                line.write(b);
            }
        }

        @Override
        public synchronized void write(byte[] b, int off, int len) {
            for (int i = off; i < off + len; i++) {
                write(b[i]);
            }
        }

        /** A PrintStream flushes after every write, mid-line too: lines end only at a newline or {@link #close}. */
        @Override
        public synchronized void flush() {
            err.flush();
        }

        @Override
        public synchronized void close() {
            if (line.size() > 0) {
                endLine();
            }
            err.flush();
        }

        synchronized List<Measurement> measurements() {
            return List.copyOf(measurements);
        }

        private void endLine() {
            String text = line.toString(StandardCharsets.UTF_8);
            line.reset();
            if (text.startsWith(RESULT_LINE)) {
                try {
                    Measurement.parseLine(text.substring(RESULT_LINE.length())).ifPresent(measurements::add);
                } catch (IllegalArgumentException e) {
                    err.println("kolo bench: unreadable result line (" + e.getMessage() + "): " + text);
                }
            } else {
                err.println(text);
            }
        }
    }
}
