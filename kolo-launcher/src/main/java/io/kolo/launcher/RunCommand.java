package io.kolo.launcher;

import io.kolo.launcher.elastic.ElasticPlan;
import io.kolo.launcher.elastic.ElasticRun;
import io.kolo.launcher.job.Display;
import io.kolo.launcher.job.Hosts;
import io.kolo.launcher.job.JobPlan;
import io.kolo.launcher.job.JobStart;
import io.kolo.launcher.job.RankEnvironment;
import io.kolo.launcher.job.RankMap;
import io.kolo.launcher.job.StaticPlan;
import io.kolo.launcher.job.UsageException;
import io.kolo.launcher.job.ViewPlan;
import io.kolo.launcher.job.WorkerGroup;
import io.kolo.launcher.node.NodeRun;
import io.kolo.launcher.start.RshAgent;
import io.kolo.launcher.start.Ssh;
import io.kolo.launcher.start.Subreaper;

import io.kolo.bootstrap.IoReason;
import io.kolo.bootstrap.KoloSettings;
import picocli.CommandLine;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;

@Command(name = "run", addMethodSubcommands = false, sortOptions = false, separator = " ",
        description = {"Start N ranks of a program on this machine or over ssh on several hosts, tagged output,"
                + " all-or-nothing exit.", "",
                "A command line written for mpirun or horovodrun runs with that word replaced by 'kolo run' when"
                        + " it uses the options below: they mean what they mean there (groups below)."},
        optionListHeading = "%nKolo options:%n",
        customSynopsis = {
                "kolo run -np N [-H HOSTS | --hostfile FILE] [-x VAR[=VALUE]]...",
                "         [-p PORT] [-i KEY] [--ssh-connect-timeout S]",
                "         [--ssh-connection-attempts N]",
                "         [--network-interface IF] [--output-dir DIR] [--start-timeout S]",
                "         [--bind-to core|socket|none] [--verbose] [mpirun or horovodrun options]",
                "         -- COMMAND [ARGS...]",
                "kolo run -np N [options] -jar APP.jar [ARGS...]",
                "kolo run -np N [options] -cp CLASSPATH MAIN_CLASS [ARGS...]",
                "kolo run -np N [options] --example NAME [-- ARGS...]",
                "kolo run --nnodes N --node-rank R --rendezvous HOST[:PORT] [--np-per-node S]",
                "         [options] -- COMMAND [ARGS...]      (once on every node)"},
        footer = {"", "Exit code: 0 when every rank exits 0, else the exit code of the first rank",
                "that failed; 2 for a usage error; 127 when a rank cannot be started or a host",
                "cannot be reached over ssh; 130 on Ctrl-C, 143 on SIGTERM; 141 when the output",
                "was closed (kolo run ... | head)."})
public final class RunCommand implements Subcommand {
    static final int DEFAULT_START_TIMEOUT = 60;

    @Option(names = {"-np", "-n", "-c", "--np"}, paramLabel = "N",
            description = "Number of ranks to start (default with -H, --hostfile or the MPI default hostfile: every"
                    + " slot; with -N: N per host).")
    Integer np;

    // A name of its own rather than one more of -np's: picocli names an option by its longest name in errors, and
    // "-np abc" should not be reported as "--num-proc".
    @Option(names = "--num-proc", paramLabel = "N", description = "horovodrun's spelling of -np.")
    void numProc(int n) {
        np = n;
    }

    @Mixin
    NodeOptions node = new NodeOptions();

    @Mixin
    ElasticOptions elastic = new ElasticOptions();

    @Option(names = {"-H", "--hosts", "--host", "-host"}, paramLabel = "HOSTS",
            description = "Hosts and slots, host:N[,host:N...] (default: the MPI default hostfile when one is"
                    + " set, else localhost:N). Other hosts are reached over ssh.")
    String hosts;

    @Option(names = {"--hostfile", "-hostfile", "--machinefile", "-machinefile"}, paramLabel = "FILE",
            description = "Hostfile: 'host slots=N [max_slots=M]' (Open MPI) or 'host:N' (MPICH) per line.")
    Path hostfile;

    @Option(names = "-x", paramLabel = "VAR[=VALUE]",
            description = "Set VAR in every rank, or forward the launcher's VAR. Repeatable.")
    List<String> exports = new ArrayList<>();

    @Option(names = "--output-dir", paramLabel = "DIR",
            description = "Also write each rank's output to DIR/rank.N/stdout and DIR/rank.N/stderr.")
    Path outputDir;

    @Option(names = "--start-timeout", paramLabel = "S",
            description = "Seconds hosts may take to answer ssh and ranks to find each other"
                    + " (KOLO_START_TIMEOUT_SECONDS; default: the launcher's KOLO_START_TIMEOUT_SECONDS or"
                    + " HOROVOD_START_TIMEOUT, else " + DEFAULT_START_TIMEOUT + ").")
    Integer startTimeoutFlag;

    /** --start-timeout, once resolved by {@link #checkStartTimeout}. */
    int startTimeoutSeconds = DEFAULT_START_TIMEOUT;

    @Option(names = {"-p", "--ssh-port"}, paramLabel = "PORT", description = "ssh port of the remote hosts.")
    int sshPort;

    @Option(names = {"-i", "--ssh-identity-file"}, paramLabel = "KEY", description = "ssh private key file.")
    Path sshIdentityFile;

    @Option(names = "--ssh-connect-timeout", paramLabel = "S", defaultValue = "10",
            description = "Seconds per ssh connection attempt (default: ${DEFAULT-VALUE}).")
    int sshConnectTimeout = 10;

    @Option(names = "--ssh-connection-attempts", paramLabel = "N", defaultValue = "1",
            description = "Connection attempts per ssh call (default: ${DEFAULT-VALUE}).")
    int sshConnectionAttempts = 1;

    @Option(names = "--network-interface", paramLabel = "IF",
            description = "Interface (or this host's address) for the rendezvous server and the data plane"
                    + " (default: KOLO_IFACE, else the address every host reaches the launcher by).")
    String networkInterface;

    @Option(names = {"--bind-to", "-bind-to"}, paramLabel = "WHAT",
            description = "core: pin each rank to one CPU of its host (by local rank), as mpirun --bind-to core;"
                    + " socket: to the CPUs of one processor package; none: leave placement to the OS (default;"
                    + " sets KOLO_BIND_TO).")
    String bindTo;

    @Option(names = "--dashboard", paramLabel = "PORT",
            description = "Serve the job's view while it runs: a live page at http://127.0.0.1:PORT/, /api/job (JSON)"
                    + " and /metrics (Prometheus); 0 picks a free port. The URL is printed (default: the"
                    + " launcher's KOLO_DASHBOARD_PORT, else none).")
    Integer dashboard;

    @Option(names = "--dashboard-bind", paramLabel = "ADDR",
            description = "Serve the view on ADDR instead of 127.0.0.1; every request then needs the token printed"
                    + " in the URL (default: the launcher's KOLO_DASHBOARD_BIND).")
    String dashboardBind;

    @Option(names = "--report", paramLabel = "FILE.html",
            description = "When the job ends, however it ends, write its view frozen into one self-contained HTML"
                    + " file (default: the launcher's KOLO_REPORT, else none).")
    Path report;

    @Option(names = "--verbose", description = "Print each rank's command line and KOLO_* variables (never the secret).")
    boolean verbose;

    @Option(names = "-jar", paramLabel = "APP.jar", description = "Run 'java -jar APP.jar ARGS' with this JDK.")
    String jar;

    @Option(names = {"-cp", "-classpath", "--class-path"}, paramLabel = "CLASSPATH",
            description = "Run 'java -cp CLASSPATH MAIN_CLASS ARGS' with this JDK.")
    String classpath;

    @Option(names = "--example", paramLabel = "NAME", description = "Run a bundled example, e.g. allreduce.")
    String example;

    @Option(names = {"-h", "--help"}, usageHelp = true, description = "Show this help and exit.")
    boolean help;

    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Parameters(paramLabel = "COMMAND", description = "The program to run and its arguments (after --).")
    List<String> command = new ArrayList<>();

    @ArgGroup(validate = false, heading = "%nmpirun-compatible options (Open MPI's spellings and meaning):%n")
    MpirunOptions mpirunGroup;

    @ArgGroup(validate = false, heading = "%nhorovodrun-compatible options (each sets the KOLO_* variable named):%n")
    HorovodrunOptions horovodrunGroup;

    /** picocli leaves a group null when none of its options is given. */
    MpirunOptions mpirun() {
        return mpirunGroup != null ? mpirunGroup : (mpirunGroup = new MpirunOptions());
    }

    HorovodrunOptions horovodrun() {
        return horovodrunGroup != null ? horovodrunGroup : (horovodrunGroup = new HorovodrunOptions());
    }

    @Override
    public int call(PrintStream out, PrintStream err, boolean installShutdownHook) throws InterruptedException {
        if (installShutdownHook) {
            // Orphans of the ranks come to this launcher, which stops them with the job (WorkerGroup). Only where
            // the launcher knows every child it starts while they run (the ranks; an elastic run's workers and discovery
            // scripts too): any other child counts as an orphan. Not in a JVM that runs kolo in-process (tests).
            Subreaper.becomeSoon();
        }
        if (node.given()) {
            return NodeRun.execute(nodePlan(System.getenv()), out, err, installShutdownHook);
        }
        if (elastic.given()) {
            return ElasticRun.execute(elasticPlan(System.getenv(), Hosts.localNames()), out, err, installShutdownHook);
        }
        return JobStart.execute(plan(System.getenv(), Hosts.localNames()), out, err, installShutdownHook);
    }

    /** The elastic job's plan (--min-np, --max-np or --host-discovery-script). */
    ElasticPlan elasticPlan(Map<String, String> launcherEnv, Predicate<String> isLocal) {
        elastic.checkBounds();
        Integer given = np;
        if (np == null && hosts == null && hostfile == null) {
            np = elastic.minNp != null ? elastic.minNp : 1;   // the base plan's -np, for its checks alone
        }
        StaticPlan base = plan(launcherEnv, isLocal);
        return elastic.plan(given, hosts != null ? hosts : hostfile != null ? hostfile.toString() : null, base,
                hostList(launcherEnv), isLocal);
    }

    /** The per-node launcher's plan (--nnodes): this node's ranks only, no hosts to reach. */
    NodeRun.Plan nodePlan(Map<String, String> launcherEnv) {
        if (hosts != null || hostfile != null) {
            throw new UsageException("--nnodes starts this node's ranks only (every node runs its own kolo run):"
                    + " no -H or --hostfile");
        }
        MpirunOptions mpi = mpirun();
        if (mpi.perNode != null || mpi.mapBy != null || mpi.oversubscribe || mpi.workingDirectory != null) {
            throw new UsageException("--nnodes places ranks itself (--np-per-node on each node, in the working"
                    + " directory): no -N, --map-by, --oversubscribe or -wdir");
        }
        checkStartTimeout(launcherEnv);
        List<String> warnings = new ArrayList<>();
        Map<String, String> exported = exports(launcherEnv, warnings);
        return NodeRun.Plan.of(node.nnodes, () -> node.nodeRank(launcherEnv), node.rendezvous, node.perNode, np,
                launcherEnv, childCommand(launcherEnv), exported, warnings,
                outputDirectory(), startTimeoutSeconds, verbose, interfaceName(launcherEnv),
                new Display(mpi.displayMap, mpi.timestampOutput, ignored(), viewPlan(launcherEnv)));
    }

    public StaticPlan plan(Map<String, String> launcherEnv, Predicate<String> isLocal) {
        MpirunOptions mpi = mpirun();
        if (np == null && mpi.perNode == null && hosts == null && hostfile == null
                && Hosts.defaultHostfile(launcherEnv) == null) {
            throw new UsageException("missing -np N (the number of ranks), or --nnodes N for a launcher per node");
        }
        if (np != null && np < 1) {
            throw new UsageException("-np must be at least 1, got " + np);
        }
        if (mpi.perNode != null && mpi.perNode < 1) {
            throw new UsageException("-N (--npernode) must be at least 1, got " + mpi.perNode);
        }
        checkStartTimeout(launcherEnv);
        if (hosts != null && hostfile != null) {
            throw new UsageException("use either -H or --hostfile, not both");
        }
        List<Hosts.Host> hostList = hostList(launcherEnv);
        if (mpi.perNode != null) {
            hostList = hostList.stream().map(h -> new Hosts.Host(h.name(), mpi.perNode)).toList();
        }
        int ranks = np != null ? np : Hosts.totalSlots(hostList);
        if (sshPort < 0 || sshPort > 65535) {
            throw new UsageException("--ssh-port must be a TCP port from 1 to 65535, got " + sshPort);
        }
        if (sshConnectTimeout < 1 || sshConnectionAttempts < 1) {
            throw new UsageException("--ssh-connect-timeout and --ssh-connection-attempts must be at least 1");
        }
        List<RankMap.Slot> slots = RankMap.assign(hostList, ranks, mpi.mapping(), mpi.oversubscribe());
        List<String> remoteHosts = slots.stream().map(RankMap.Slot::host).distinct()
                .filter(h -> !isLocal.test(h)).toList();
        List<String> warnings = new ArrayList<>();
        Map<String, String> exported = exports(launcherEnv, warnings);
        String iface = interfaceName(launcherEnv);
        RshAgent agent = RshAgent.choose(mpi.rshAgent(), mpi.rshAgentSource(), mpi.rshArgs(), launcherEnv);
        List<String> sshClient = Ssh.clientCommand(launcherEnv);
        if (agent != null && agent.isSsh()) {
            // An ssh agent is ssh with the options Kolo gives it (KOLO_SSH_COMMAND, Kolo's own, still wins).
            String kolosOwn = launcherEnv.get(Ssh.COMMAND_VAR);
            if (kolosOwn == null || kolosOwn.isBlank()) {
                sshClient = agent.sshCommand();
            }
            agent = null;
        } else if (agent != null && !agent.sshArgs().isEmpty()) {
            warnings.add("kolo: plm_rsh_args ignored: the rsh agent " + agent.describe() + " is not ssh and gets only"
                    + " HOST COMMAND");
        }
        Ssh ssh = new Ssh(sshClient, sshPort, sshIdentityFile,
                Math.min(sshConnectTimeout, startTimeoutSeconds), sshConnectionAttempts);
        return new StaticPlan(ranks, slots, childCommand(launcherEnv), exported, warnings, outputDirectory(),
                startTimeoutSeconds, verbose, remoteHosts, ssh, iface, workingDirectory(),
                new Display(mpi.displayMap, mpi.timestampOutput, ignored(), viewPlan(launcherEnv)), agent);
    }

    /**
     * --dashboard, --dashboard-bind and --report, else the launcher's own KOLO_DASHBOARD_PORT, KOLO_DASHBOARD_BIND and
     * KOLO_REPORT: under kolo run the launcher holds the view (ranks only publish to it), whoever asked for it.
     */
    ViewPlan viewPlan(Map<String, String> launcherEnv) {
        Integer port = dashboard;
        String bind = dashboardBind;
        Path file = report;
        try {
            if (port == null) {
                port = KoloSettings.DASHBOARD_PORT.from(launcherEnv);
            }
            if (bind == null && port != null && launcherEnv.get(KoloSettings.DASHBOARD_BIND.name()) != null) {
                bind = KoloSettings.DASHBOARD_BIND.from(launcherEnv);
            }
            if (file == null && KoloSettings.REPORT.from(launcherEnv) != null) {
                file = Path.of(KoloSettings.REPORT.from(launcherEnv));
            }
        } catch (io.kolo.BadSettingException | java.nio.file.InvalidPathException e) {
            throw new UsageException(e.getMessage() + " (no rank was started)");
        }
        List<String> typed = spec == null ? List.of() : spec.commandLine().getParseResult() == null ? List.of()
                : spec.commandLine().getParseResult().originalArgs();
        return new ViewPlan(port, bind, file, typed.isEmpty() ? null : "kolo " + RankEnvironment.shellQuote(typed));
    }

    /** -H, --hostfile, the MPI default hostfile, or this host with -np slots. */
    List<Hosts.Host> hostList(Map<String, String> launcherEnv) {
        if (hosts != null) {
            return Hosts.parseList(hosts);
        }
        if (hostfile != null) {
            List<String> lines;
            try {
                lines = Files.readAllLines(hostfile);
            } catch (IOException e) {
                throw new UsageException("cannot read hostfile " + hostfile + ": " + IoReason.of(e));
            }
            return Hosts.parseHostfile(lines, hostfile.toString());
        }
        if (Hosts.defaultHostfile(launcherEnv) != null) {
            Map.Entry<String, String> def = Hosts.defaultHostfile(launcherEnv);
            List<String> lines;
            try {
                lines = Files.readAllLines(Path.of(def.getValue()));
            } catch (IOException | RuntimeException e) {
                throw new UsageException("cannot read the default hostfile " + def.getValue() + " (from "
                        + def.getKey() + "): " + e + "; unset " + def.getKey() + " or give -H");
            }
            return Hosts.parseHostfile(lines, def.getValue());
        }
        int n = np != null ? np : mpirun().perNode;
        return List.of(new Hosts.Host("localhost", n));
    }

    /** --network-interface, else horovodrun's --network-interfaces, else KOLO_IFACE (or HOROVOD_GLOO_IFACE). */
    private String interfaceName(Map<String, String> launcherEnv) {
        String iface = networkInterface != null ? networkInterface : horovodrun().networkInterface();
        if (iface == null) {
            iface = io.kolo.bootstrap.KoloSettings.IFACE.from(launcherEnv);
        }
        return iface == null || iface.isBlank() ? null : iface.strip();
    }

    /** --output-dir (DIR/rank.N) or mpirun's --output-filename (DIR/1/rank.N, the job being Open MPI's job 1). */
    private Path outputDirectory() {
        Path ompi = mpirun().outputFilename;
        if (outputDir != null && ompi != null) {
            throw new UsageException("use either --output-dir or --output-filename, not both");
        }
        return ompi != null ? ompi.toAbsolutePath().resolve("1") : outputDir;
    }

    /** -wdir, else the launcher's own working directory. */
    private String workingDirectory() {
        Path wdir = mpirun().workingDirectory;
        if (wdir == null) {
            return Path.of("").toAbsolutePath().toString();
        }
        Path abs = wdir.toAbsolutePath().normalize();
        if (!Files.isDirectory(abs)) {
            throw new UsageException("-wdir " + wdir + ": no such directory here (it must exist on every host)");
        }
        return abs.toString();
    }

    private List<String> ignored() {
        List<String> lines = new ArrayList<>(mpirun().ignored());
        lines.addAll(horovodrun().ignored());
        lines.addAll(elastic.ignored());
        return lines;
    }

    /**
     * --start-timeout, else the launcher's own KOLO_START_TIMEOUT_SECONDS (or HOROVOD_START_TIMEOUT, as horovodrun
     * reads it), else 60. The ranks always get the launcher's value, so that ranks and ssh checks agree on it.
     */
    private void checkStartTimeout(Map<String, String> launcherEnv) {
        if (startTimeoutFlag != null) {
            if (startTimeoutFlag < 1) {
                throw new UsageException("--start-timeout must be at least 1 second, got " + startTimeoutFlag);
            }
            startTimeoutSeconds = startTimeoutFlag;
            return;
        }
        try {
            startTimeoutSeconds = io.kolo.bootstrap.KoloSettings.START_TIMEOUT_SECONDS.from(launcherEnv);
        } catch (io.kolo.BadSettingException e) {
            throw new UsageException(e.getMessage() + " (no rank was started)");
        }
    }

    /**
     * What every rank gets on top of the KOLO_* job variables: the launcher's HOROVOD_* tuning translated (ranks over
     * ssh do not inherit the launcher's environment), then -x, then the flags, each later one winning.
     */
    private Map<String, String> exports(Map<String, String> launcherEnv, List<String> warnings) {
        Map<String, String> given = RankEnvironment.exports(exports, launcherEnv, warnings);
        if (bindTo != null) {
            if (!bindTo.equals("core") && !bindTo.equals("socket") && !bindTo.equals("none")) {
                throw new UsageException("--bind-to " + bindTo + ": use core (one CPU per rank), socket (the CPUs of"
                        + " one processor package) or none");
            }
            given.put("KOLO_BIND_TO", bindTo);
        }
        if (viewPlan(launcherEnv).on()) {
            // The ranks publish what they do; the launcher serves and writes the view (never a rank: no port here).
            given.put(KoloSettings.VIEW.name(), "1");
        }
        if (mpirun().reportBindings) {
            given.put(io.kolo.bootstrap.KoloSettings.REPORT_BINDINGS.name(), "1");
        }
        given.putAll(horovodrun().settings());
        // Checked before HOROVOD_* become KOLO_*, so that a bad value is reported under the name the user set.
        RankEnvironment.checkSettings(launcherEnv, given);
        Map<String, String> exported = RankEnvironment.launcherSettings(launcherEnv);
        exported.putAll(given);
        UnusedSettings.warn(exported, warnings);
        return exported;
    }

    private List<String> childCommand(Map<String, String> launcherEnv) {
        int forms = (jar != null ? 1 : 0) + (classpath != null ? 1 : 0) + (example != null ? 1 : 0);
        if (forms > 1) {
            throw new UsageException("use only one of -jar, -cp and --example");
        }
        if (jar != null) {
            return ChildCommand.forJar(jar, command);
        }
        if (classpath != null) {
            return ChildCommand.forClasspath(classpath, command);
        }
        if (example != null) {
            return ChildCommand.forExample(example, command, ChildCommand.koloHome(launcherEnv),
                    !"0".equals(launcherEnv.get("KOLO_AOT")));
        }
        if (command.isEmpty()) {
            throw new UsageException("no command to run: kolo run -np N -- COMMAND [ARGS...]");
        }
        return List.copyOf(command);
    }
}
