package io.kolo.launcher;

import io.kolo.launcher.job.Job;
import io.kolo.launcher.job.RankMap;
import io.kolo.launcher.job.StaticPlan;
import io.kolo.launcher.job.UsageException;
import io.kolo.launcher.node.NodeRun;
import io.kolo.launcher.node.RendezvousEndpoint;
import io.kolo.launcher.start.Ssh;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class RunCommandTest {
    private static final String JAVA = ChildCommand.javaExecutable();

    static RunCommand parse(String... args) {
        RunCommand run = new RunCommand();
        new CommandLine(run).parseArgs(ProgramBoundary.normalize(List.of(args)).toArray(String[]::new));
        return run;
    }

    static StaticPlan plan(String... args) {
        return parse(args).plan(Map.of("HOME", "/home/me"), h -> h.equals("localhost") || h.startsWith("127."));
    }

    @Test
    void bindToBecomesKoloBindToAndAnUnknownValueIsAUsageError() {
        assertEquals("core", plan("-np", "2", "--bind-to", "core", "--", "true").exports().get("KOLO_BIND_TO"));
        assertEquals("none", plan("-np", "2", "--bind-to", "none", "--", "true").exports().get("KOLO_BIND_TO"));
        assertEquals(null, plan("-np", "2", "--", "true").exports().get("KOLO_BIND_TO"));
        assertEquals("socket", plan("-np", "2", "-bind-to", "socket", "--", "true").exports().get("KOLO_BIND_TO"));
        UsageException bad = assertThrows(UsageException.class, () -> plan("-np", "2", "--bind-to", "numa", "--", "true"));
        assertEquals("--bind-to numa: use core (one CPU per rank), socket (the CPUs of one processor package) or none",
                bad.getMessage());
    }

    @Test
    void normalizeEndsKoloOptionsWhereMpirunWould() {
        assertEquals(List.of("-np", "2", "--", "python", "-x", "1"),
                ProgramBoundary.normalize(List.of("-np", "2", "python", "-x", "1")));
        assertEquals(List.of("-np", "2", "-jar", "app.jar", "--", "-np", "5", "--verbose"),
                ProgramBoundary.normalize(List.of("-np", "2", "-jar", "app.jar", "-np", "5", "--verbose")));
        assertEquals(List.of("-cp", "a:b", "--", "Main", "-x"),
                ProgramBoundary.normalize(List.of("-cp", "a:b", "Main", "-x")));
        assertEquals(List.of("-np", "2", "-x", "A=1", "--verbose", "--", "sh", "-c", "x"),
                ProgramBoundary.normalize(List.of("-np", "2", "-x", "A=1", "--verbose", "--", "sh", "-c", "x")));
        assertEquals(List.of("--example", "allreduce", "--", "--size", "10"),
                ProgramBoundary.normalize(List.of("--example", "allreduce", "--", "--size", "10")));
    }

    @Test
    void defaults() {
        StaticPlan p = plan("-np", "2", "--", "echo", "hi");
        assertEquals(2, p.np());
        assertEquals(List.of("echo", "hi"), p.command());
        assertEquals(60, p.startTimeoutSeconds());
        assertFalse(p.verbose());
        assertNull(p.outputDir());
        assertEquals(List.of("localhost", "localhost"), p.slots().stream().map(RankMap.Slot::host).toList());
        assertTrue(p.exports().isEmpty());
    }

    /**
     * horovodrun takes HOROVOD_START_TIMEOUT as the default of --start-timeout, and the launcher's own KOLO_* settings
     * reach the job unless a flag or -x says otherwise. Before: both were ignored (ranks got 60 s), though a bad
     * HOROVOD_START_TIMEOUT was refused.
     */
    @Test
    void theLaunchersStartTimeoutVariablesAreStartTimeoutsDefault() {
        java.util.function.Predicate<String> local = h -> h.equals("localhost");
        assertEquals(7, parse("-np", "1", "--", "true")
                .plan(Map.of("KOLO_START_TIMEOUT_SECONDS", "7"), local).startTimeoutSeconds());
        assertEquals(8, parse("-np", "1", "--", "true")
                .plan(Map.of("HOROVOD_START_TIMEOUT", "8"), local).startTimeoutSeconds());
        assertEquals(7, parse("-np", "1", "--", "true")
                .plan(Map.of("KOLO_START_TIMEOUT_SECONDS", "7", "HOROVOD_START_TIMEOUT", "8"), local)
                .startTimeoutSeconds());
        assertEquals(5, parse("-np", "1", "--start-timeout", "5", "--", "true")
                .plan(Map.of("KOLO_START_TIMEOUT_SECONDS", "7"), local).startTimeoutSeconds());
        UsageException bad = assertThrows(UsageException.class, () -> parse("-np", "1", "--", "true")
                .plan(Map.of("KOLO_START_TIMEOUT_SECONDS", "soon"), local));
        assertTrue(bad.getMessage().startsWith("KOLO_START_TIMEOUT_SECONDS='soon' is invalid"), bad.getMessage());
    }

    /**
     * Ranks over ssh do not inherit the launcher's environment: its KOLO_* settings must travel with the job, as its
     * HOROVOD_* ones do. Before: only the HOROVOD_* ones did, so "KOLO_CYCLE_TIME=5 kolo run -H a,b" ran b's ranks at
     * 1 ms, and an exported KOLO_HIERARCHICAL_ALLREDUCE=1 failed the job for ranks that disagreed on it.
     */
    @Test
    void theLaunchersOwnKoloSettingsReachRanksOnOtherHosts() {
        Map<String, String> env = Map.of("KOLO_CYCLE_TIME", "5", "KOLO_HIERARCHICAL_ALLREDUCE", "1",
                "HOROVOD_FUSION_THRESHOLD", "1000", "HOROVOD_CACHE_CAPACITY", "9", "KOLO_CACHE_CAPACITY", "7",
                "KOLO_RANK", "3", "KOLO_IFACE", "10.0.0.1", "KOLO_SSH_COMMAND", "ssh -F cfg", "KOLO_HOME", "/opt/kolo");
        Map<String, String> exports = parse("-np", "2", "-H", "localhost:1,node-1:1", "-x", "KOLO_CYCLE_TIME=3", "--",
                "true").plan(env, h -> h.equals("localhost")).exports();
        assertEquals(Map.of("KOLO_CYCLE_TIME", "3", "KOLO_HIERARCHICAL_ALLREDUCE", "1",
                "KOLO_FUSION_THRESHOLD", "1000", "KOLO_CACHE_CAPACITY", "7"), exports);
    }

    @Test
    void allOptions(@TempDir Path dir) {
        StaticPlan p = plan("-np", "3", "-H", "localhost:2,127.0.0.1:2", "-x", "A=1", "-x", "HOME",
                "--output-dir", dir.toString(), "--start-timeout", "5", "--verbose", "--", "sh", "-c", "true");
        assertEquals(List.of("localhost", "localhost", "127.0.0.1"),
                p.slots().stream().map(RankMap.Slot::host).toList());
        assertEquals(Map.of("A", "1", "HOME", "/home/me"), p.exports());
        assertEquals(dir, p.outputDir());
        assertEquals(5, p.startTimeoutSeconds());
        assertTrue(p.verbose());
        assertEquals(List.of("sh", "-c", "true"), p.command());
    }

    @Test
    void javaConveniences() {
        assertEquals(List.of(JAVA, "--enable-native-access=ALL-UNNAMED", "--add-modules=jdk.incubator.vector", "-jar", "app.jar", "--epochs", "3"),
                plan("-np", "2", "-jar", "app.jar", "--epochs", "3").command());
        assertEquals(List.of(JAVA, "--enable-native-access=ALL-UNNAMED", "--add-modules=jdk.incubator.vector", "-cp", "a.jar:b.jar", "com.x.Main", "-np"),
                plan("-np", "2", "-cp", "a.jar:b.jar", "com.x.Main", "-np").command());
        assertEquals(List.of(JAVA, "--enable-native-access=ALL-UNNAMED", "--add-modules=jdk.incubator.vector", "-cp", "lib/*", "M"),
                plan("-np", "1", "-classpath", "lib/*", "M").command());
        assertTrue(JAVA.endsWith("java"), JAVA);
    }

    @Test
    void hostfile(@TempDir Path dir) throws IOException {
        Path hf = dir.resolve("hosts");
        Files.write(hf, List.of("# local only", "localhost slots=2", "127.0.0.1:2"));
        StaticPlan p = plan("-np", "4", "--hostfile", hf.toString(), "--", "true");
        assertEquals(List.of(0, 1, 0, 1), p.slots().stream().map(s -> s.topology().localRank()).toList());
        assertEquals(List.of(0, 0, 1, 1), p.slots().stream().map(s -> s.topology().crossRank()).toList());
        UsageException tooFew = assertThrows(UsageException.class,
                () -> plan("-np", "5", "--hostfile", hf.toString(), "--", "true"));
        assertTrue(tooFew.getMessage().contains("provide only 4 (localhost:2,127.0.0.1:2)"), tooFew.getMessage());
        assertEquals("cannot read hostfile " + dir.resolve("nope") + ": no such file or directory",
                assertThrows(UsageException.class,
                        () -> plan("-np", "1", "--hostfile", dir.resolve("nope").toString(), "--", "true")).getMessage());
    }

    @Test
    void otherHostsAreRemoteAndReachedWithTheSshOptions() {
        StaticPlan p = parse("-np", "3", "-H", "localhost:1,node-1:2", "-p", "2222", "-i", "/keys/id",
                "--ssh-connect-timeout", "30", "--start-timeout", "20", "--network-interface", "eth1", "--", "true")
                .plan(Map.of("KOLO_SSH_COMMAND", "ssh -F cfg"), h -> h.equals("localhost"));
        assertEquals(List.of("node-1"), p.remoteHosts());
        assertEquals(List.of("localhost", "node-1", "node-1"), p.slots().stream().map(RankMap.Slot::host).toList());
        // The connect timeout never exceeds the start timeout.
        assertEquals(new Ssh(List.of("ssh", "-F", "cfg"), 2222, Path.of("/keys/id"), 20, 1), p.ssh());
        assertEquals("eth1", p.networkInterface());
        assertEquals(Path.of("").toAbsolutePath().toString(), p.workingDirectory());
        assertEquals("eth0", parse("-np", "1", "--", "true").plan(Map.of("KOLO_IFACE", "eth0"), h -> true)
                .networkInterface());
    }

    @Test
    void theMpiDefaultHostfileIsUsedWhenNoHostsAreGiven(@TempDir Path dir) throws IOException {
        Path hf = Files.writeString(dir.resolve("hostfile"), "job-worker-0.job.ns.svc slots=2\n"
                + "job-worker-1.job.ns.svc slots=2\n");
        StaticPlan p = parse("-np", "4", "--", "true").plan(
                Map.of("OMPI_MCA_orte_default_hostfile", hf.toString()), h -> false);
        assertEquals(List.of("job-worker-0.job.ns.svc", "job-worker-1.job.ns.svc"), p.remoteHosts());
        UsageException few = assertThrows(UsageException.class, () -> parse("-np", "5", "--", "true").plan(
                Map.of("OMPI_MCA_orte_default_hostfile", hf.toString()), h -> false));
        assertEquals("-np 5 needs 5 slots but the hosts provide only 4 (job-worker-0.job.ns.svc:2,"
                + "job-worker-1.job.ns.svc:2)", few.getMessage());
        UsageException missing = assertThrows(UsageException.class, () -> parse("-np", "1", "--", "true").plan(
                Map.of("HYDRA_HOST_FILE", dir.resolve("nope").toString()), h -> false));
        assertTrue(missing.getMessage().startsWith("cannot read the default hostfile " + dir.resolve("nope")
                + " (from HYDRA_HOST_FILE)"), missing.getMessage());
        // Without -np, every slot of the default hostfile, as mpirun (and an MPIJob's launcher) does.
        StaticPlan all = parse("--", "true").plan(Map.of("OMPI_MCA_orte_default_hostfile", hf.toString()),
                h -> false);
        assertEquals(4, all.np());
        assertEquals(List.of("job-worker-0.job.ns.svc", "job-worker-1.job.ns.svc"), all.remoteHosts());
        // -H still wins over the environment.
        assertEquals(List.of(), parse("-np", "1", "-H", "localhost:1", "--", "true").plan(
                Map.of("OMPI_MCA_orte_default_hostfile", hf.toString()), h -> h.equals("localhost")).remoteHosts());
    }

    @Test
    void semanticUsageErrors() {
        assertUsage("-np must be at least 1", "-np", "0", "--", "true");
        assertUsage("missing -np N", "--", "true");
        assertUsage("no command to run", "-np", "2");
        assertUsage("use either -H or --hostfile", "-np", "1", "-H", "localhost:1", "--hostfile", "f", "--", "true");
        assertUsage("--start-timeout must be at least 1", "-np", "1", "--start-timeout", "0", "--", "true");
        assertUsage("needs a main class", "-np", "1", "-cp", "x.jar");
        assertUsage("use only one of -jar, -cp and --example", "-np", "1", "--example", "x", "-jar", "a.jar");
    }

    @Test
    void syntaxErrors() {
        assertThrows(CommandLine.ParameterException.class, () -> parse("-np", "two", "--", "true"));
        assertThrows(CommandLine.UnmatchedArgumentException.class, () -> parse("-np", "2", "--bogus", "--", "true"));
    }

    static NodeRun.Plan nodePlan(Map<String, String> env, String... args) {
        return parse(args).nodePlan(env);
    }

    @Test
    void perNodeOptionsGiveThisNodesRanksAndTheRendezvous() {
        Map<String, String> env = Map.of("KOLO_SECRET", "ab".repeat(32));
        NodeRun.Plan p = nodePlan(env, "--nnodes", "3", "--node-rank", "2", "--rendezvous", "train-0.train:2222",
                "-np-per-node", "4", "--", "python", "-x");
        assertEquals(3, p.nnodes());
        assertEquals(2, p.nodeRank());
        assertEquals(4, p.perNode());
        assertEquals(new RendezvousEndpoint("train-0.train", 2222), p.endpoint());
        assertEquals(List.of("python", "-x"), p.command());
        assertTrue(p.isLocal(8) && p.isLocal(11) && !p.isLocal(7) && !p.isLocal(12));
        // Both spellings; -np divided among the nodes; the default port; the node rank of an Indexed Job's pod.
        assertEquals(2, nodePlan(env, "--nnodes", "2", "--node-rank", "0", "--rendezvous", "h", "--np-per-node",
                "2", "--", "true").perNode());
        NodeRun.Plan fromNp = parse("-np", "6", "--nnodes", "3", "--rendezvous", "[::1]", "--", "true")
                .nodePlan(Map.of("KOLO_SECRET", "ab".repeat(32), "JOB_COMPLETION_INDEX", "1"));
        assertEquals(2, fromNp.perNode());
        assertEquals(1, fromNp.nodeRank());
        assertEquals(new RendezvousEndpoint("::1", 29500), fromNp.endpoint());
        assertEquals(1, nodePlan(Map.of(), "--nnodes", "1", "--node-rank", "0", "--rendezvous", "localhost", "--",
                "true").perNode());
    }

    @Test
    void perNodeUsageErrors() {
        Map<String, String> env = Map.of("KOLO_SECRET", "ab".repeat(32));
        String[][] cases = {
                {"--nnodes must be at least 1", "--nnodes", "0", "--node-rank", "0", "--rendezvous", "h"},
                {"--node-rank must be from 0 to 1", "--nnodes", "2", "--node-rank", "2", "--rendezvous", "h"},
                {"--nnodes needs --node-rank", "--nnodes", "2", "--rendezvous", "h"},
                {"--nnodes needs --rendezvous", "--nnodes", "2", "--node-rank", "1"},
                {"--np-per-node must be at least 1", "--nnodes", "2", "--node-rank", "1", "--rendezvous", "h",
                        "--np-per-node", "0"},
                {"-np 5 is not a multiple of --nnodes 2", "-np", "5", "--nnodes", "2", "--node-rank", "1",
                        "--rendezvous", "h"},
                {"-np 5 does not match --nnodes 2 x --np-per-node 2", "-np", "5", "--nnodes", "2", "--node-rank", "1",
                        "--rendezvous", "h", "--np-per-node", "2"},
                {"--rendezvous h:0: expected HOST or HOST:PORT", "--nnodes", "2", "--node-rank", "1", "--rendezvous",
                        "h:0"},
                {"go with --nnodes", "--node-rank", "1", "--rendezvous", "h"},
                {"no -H or --hostfile", "--nnodes", "2", "--node-rank", "1", "--rendezvous", "h", "-H", "a:1"},
        };
        for (String[] c : cases) {
            List<String> args = new java.util.ArrayList<>(List.of(c).subList(1, c.length));
            args.addAll(List.of("--", "true"));
            UsageException e = assertThrows(UsageException.class, () -> nodePlan(env, args.toArray(String[]::new)),
                    String.join(" ", args));
            assertTrue(e.getMessage().contains(c[0]), e.getMessage());
        }
        UsageException noSecret = assertThrows(UsageException.class, () -> nodePlan(Map.of(), "--nnodes", "2",
                "--node-rank", "1", "--rendezvous", "h", "--", "true"));
        assertTrue(noSecret.getMessage().startsWith("--nnodes 2 needs the job secret in KOLO_SECRET"),
                noSecret.getMessage());
    }

    @Test
    void kolo_k8sWithoutItsModuleOnTheClasspathSaysHowToGetIt() {
        LauncherProcessTest.Result r = LauncherProcessTest.kolo("k8s", "list");
        assertEquals(2, r.code());
        assertEquals("kolo: kolo k8s needs the kolo-k8s module on the classpath, which ./kolo adds for this command"
                + " (build it with ./mvnw -DskipTests package)\n", r.err());
    }

    @Test
    void mpirunsSpellingsMeanWhatTheyMeanThere(@TempDir Path dir) throws IOException {
        StaticPlan p = plan("-n", "4", "-host", "localhost:2,127.0.0.1:2", "-map-by", "node", "-x", "A=1", "--",
                "true");
        assertEquals(List.of("localhost", "127.0.0.1", "localhost", "127.0.0.1"),
                p.slots().stream().map(RankMap.Slot::host).toList());
        assertEquals(4, plan("-c", "4", "--", "true").np());
        assertEquals(4, plan("--np", "4", "--", "true").np());
        Path hf = Files.writeString(dir.resolve("machines"), "localhost slots=3\n");
        assertEquals(3, plan("-machinefile", hf.toString(), "--", "true").np(), "-np defaults to every slot");
        StaticPlan perNode = plan("-N", "2", "-H", "localhost,127.0.0.1", "--", "true");
        assertEquals(List.of("localhost", "localhost", "127.0.0.1", "127.0.0.1"),
                perNode.slots().stream().map(RankMap.Slot::host).toList());
        assertEquals(3, plan("-np", "3", "--oversubscribe", "-H", "localhost:1", "--", "true").slots().size());
        assertEquals(3, plan("-np", "3", "--map-by", "slot:OVERSUBSCRIBE", "-H", "localhost:1", "--", "true").np());
        assertUsage("needs 3 slots but the hosts provide only 1", "-np", "3", "-nooversubscribe", "-H", "localhost:1",
                "--", "true");
        assertUsage("use either --oversubscribe or --nooversubscribe", "-np", "1", "--oversubscribe",
                "--nooversubscribe", "--", "true");

        StaticPlan out = plan("-np", "2", "--output-filename", dir.resolve("o").toString(), "-wdir", dir.toString(),
                "--display-map", "--timestamp-output", "--report-bindings", "--tag-output", "--allow-run-as-root",
                "-mca", "pml", "ob1", "--gmca", "btl", "^openib", "--prefix", "/opt/ompi", "--", "true");
        assertEquals(dir.resolve("o").toAbsolutePath().resolve("1"), out.outputDir());
        assertEquals(dir.toAbsolutePath().toString(), out.workingDirectory());
        assertTrue(out.display().map() && out.display().timestamps());
        assertEquals("1", out.exports().get("KOLO_REPORT_BINDINGS"));
        assertEquals(List.of("kolo: --allow-run-as-root ignored: kolo run never refuses root",
                "kolo: --tag-output ignored: kolo run always tags output lines with [rank]<stream>:",
                "kolo: --prefix /opt/ompi ignored: it names Open MPI's installation; kolo run starts the command as"
                        + " given on every host",
                "kolo: -mca pml ob1 ignored: it tunes Open MPI's own transports; Kolo's settings are KOLO_* variables"
                        + " (see docs/settings.md)",
                "kolo: --gmca btl ^openib ignored: it tunes Open MPI's own transports; Kolo's settings are KOLO_*"
                        + " variables (see docs/settings.md)"), out.display().ignored());
        assertUsage("-wdir " + dir.resolve("nowhere") + ": no such directory here", "-np", "1", "-wdir",
                dir.resolve("nowhere").toString(), "--", "true");
        assertUsage("use either --output-dir or --output-filename", "-np", "1", "--output-dir", "a",
                "--output-filename", "b", "--", "true");
    }

    @Test
    void horovodrunsFlagsBecomeKoloSettings() {
        StaticPlan p = plan("-np", "2", "--fusion-threshold-mb", "64", "--cycle-time-ms", "2.5",
                "--cache-capacity", "100", "--hierarchical-allreduce", "--no-hierarchical-allgather",
                "--timeline-filename", "/tmp/t.json", "--timeline-mark-cycles", "--stall-check-warning-time-seconds",
                "30", "--stall-check-shutdown-time-seconds", "90", "--no-stall-check", "--log-level", "DEBUG",
                "--network-interfaces", "eth1,eth2", "--mpi", "--autotune", "--autotune-log-file", "/tmp/a.csv", "--",
                "true");
        assertEquals(Map.ofEntries(Map.entry("KOLO_FUSION_THRESHOLD", "67108864"), Map.entry("KOLO_CYCLE_TIME", "2.5"),
                Map.entry("KOLO_CACHE_CAPACITY", "100"), Map.entry("KOLO_HIERARCHICAL_ALLREDUCE", "1"),
                Map.entry("KOLO_HIERARCHICAL_ALLGATHER", "0"), Map.entry("KOLO_TIMELINE", "/tmp/t.json"),
                Map.entry("KOLO_TIMELINE_MARK_CYCLES", "1"), Map.entry("KOLO_STALL_CHECK_TIME_SECONDS", "30"),
                Map.entry("KOLO_STALL_SHUTDOWN_TIME_SECONDS", "90"), Map.entry("KOLO_STALL_CHECK_DISABLE", "1"),
                Map.entry("KOLO_LOG_LEVEL", "DEBUG"), Map.entry("KOLO_AUTOTUNE", "1"),
                Map.entry("KOLO_AUTOTUNE_LOG", "/tmp/a.csv")), p.exports());
        assertEquals("eth1", p.networkInterface());
        assertEquals(List.of("kolo: --mpi ignored: Kolo has one runtime, its own",
                "kolo: --network-interfaces eth1,eth2: Kolo uses one interface, eth1"), p.display().ignored());
        assertUsage("use either --hierarchical-allreduce or --no-hierarchical-allreduce", "-np", "1",
                "--hierarchical-allreduce", "--no-hierarchical-allreduce", "--", "true");
    }

    /**
     * horovodrun parses its flags with argparse, which also takes {@code --flag=value} and {@code -np=4}, and spells
     * -np {@code --num-proc}. Before: "Unknown option: '--fusion-threshold-mb=32'", and for -np=4 "Invalid value for
     * option '--np': 'p=4' is not an int".
     */
    @Test
    void horovodrunsArgparseSpellingsMeanTheSame() {
        StaticPlan p = plan("-np=4", "--fusion-threshold-mb=32", "--start-timeout=30", "-x=A=1", "python",
                "train.py", "--lr=0.1");
        assertEquals(4, p.np());
        assertEquals(30, p.startTimeoutSeconds());
        assertEquals("33554432", p.exports().get("KOLO_FUSION_THRESHOLD"));
        assertEquals("1", p.exports().get("A"));
        assertEquals(List.of("python", "train.py", "--lr=0.1"), p.command());
        assertEquals(3, plan("--num-proc", "3", "--", "true").np());
        assertEquals(List.of("-np", "2", "--", "python", "--start-timeout=5"),
                ProgramBoundary.normalize(List.of("-np=2", "python", "--start-timeout=5")));
    }

    @Test
    void elasticFlagsWithoutMinNpMaxNpOrAScriptAreNamedAsIgnoredUnderVerbose() {
        // As in horovodrun, only --min-np, --max-np or a discovery script make the job elastic; the other elastic
        // flags alone change nothing, and --verbose says so instead of staying silent.
        StaticPlan p = plan("-np", "2", "--reset-limit", "3", "--slots-per-host", "2", "--elastic-timeout", "5",
                "--blacklist-cooldown-range", "2", "4", "--", "true");
        String why = " ignored: the job is elastic only with --min-np, --max-np or --host-discovery-script";
        assertEquals(List.of("kolo: --slots-per-host 2" + why, "kolo: --reset-limit 3" + why,
                "kolo: --elastic-timeout 5" + why, "kolo: --blacklist-cooldown-range 2 4" + why),
                p.display().ignored());
        assertEquals(List.of(), plan("-np", "2", "--", "true").display().ignored());
    }

    /**
     * horovodrun's autotune and cache flags for settings Kolo has too. Before: "Unknown option", though the README says
     * a horovodrun command line runs with the word replaced.
     */
    @Test
    void horovodrunsAutotuneAndCacheFlagsBecomeKoloSettings() {
        StaticPlan p = plan("-np", "1", "--autotune", "--autotune-warmup-samples", "1",
                "--autotune-steps-per-sample", "5", "--autotune-bayes-opt-max-samples", "12", "--disable-cache", "--",
                "true");
        assertEquals(Map.of("KOLO_AUTOTUNE", "1", "KOLO_AUTOTUNE_WARMUP_SAMPLES", "1",
                "KOLO_AUTOTUNE_STEPS_PER_SAMPLE", "5", "KOLO_AUTOTUNE_BAYES_OPT_MAX_SAMPLES", "12",
                "KOLO_CACHE_CAPACITY", "0"), p.exports());
        assertUsage("--autotune-steps-per-sample 0: expected a number of cycles that ran ops, from 1 to 100000"
                + " (KOLO_AUTOTUNE_STEPS_PER_SAMPLE)", "-np", "1", "--autotune-steps-per-sample", "0", "--", "true");
        assertUsage("use either --disable-cache or --cache-capacity", "-np", "1", "--disable-cache",
                "--cache-capacity", "9", "--", "true");
    }

    @Test
    void horovodVariablesOfTheLauncherReachRanksAsKoloSettingsUnlessKolosOwnOrAFlagIsGiven() {
        Map<String, String> env = Map.of("HOROVOD_FUSION_THRESHOLD", "1024", "HOROVOD_CYCLE_TIME", "3",
                "HOROVOD_CACHE_CAPACITY", "5", "KOLO_CACHE_CAPACITY", "6", "HOROVOD_GLOO_IFACE", "lo",
                "HOROVOD_START_TIMEOUT", "5");
        StaticPlan p = parse("-np", "2", "--cycle-time-ms", "4", "--", "true").plan(env, h -> true);
        assertEquals(Map.of("KOLO_FUSION_THRESHOLD", "1024", "KOLO_CYCLE_TIME", "4", "KOLO_CACHE_CAPACITY", "6"),
                p.exports());
        assertEquals("lo", p.networkInterface(), "HOROVOD_GLOO_IFACE stands for KOLO_IFACE");
        assertEquals(5, p.startTimeoutSeconds(), "HOROVOD_START_TIMEOUT stands for KOLO_START_TIMEOUT_SECONDS");
    }

    /** Every option picocli knows is in --help, and its value count decides where the program starts. */
    @Test
    void helpNamesEveryOptionAndNormalizeKnowsEveryValue() {
        LauncherProcessTest.Result help = LauncherProcessTest.kolo("run", "--help");
        assertEquals(0, help.code());
        CommandLine.Model.CommandSpec spec = new CommandLine(new RunCommand()).getCommandSpec();
        for (CommandLine.Model.OptionSpec o : spec.options()) {
            for (String name : o.names()) {
                assertTrue(Pattern.compile("(^|[ ,])" + Pattern.quote(name) + "([ ,=]|$)", Pattern.MULTILINE)
                        .matcher(help.out()).find(), "--help does not name " + name);
            }
            if (o.arity().max() > 0 && !o.usageHelp()) {
                List<String> args = new java.util.ArrayList<>(List.of(o.longestName()));
                for (int i = 0; i < o.arity().max(); i++) {
                    args.add("v" + i);
                }
                args.addAll(List.of("prog", "arg"));
                List<String> normalized = ProgramBoundary.normalize(args);
                assertEquals(List.of("--", "prog", "arg"), normalized.subList(normalized.size() - 3, normalized.size()),
                        o.longestName() + "'s value was taken for the program: " + normalized);
            }
        }
        assertTrue(help.out().contains("mpirun-compatible options") && help.out().contains("horovodrun-compatible"),
                help.out());
    }

    /**
     * --autotune-log-file without --autotune wrote nothing and said nothing (rank 0 writes the log only while it
     * tunes); the launcher now says so, in both spellings, before any rank starts.
     */
    @Test
    void anAutotuneLogWithoutAutotuneIsSaidToDoNothing() {
        String warning = "kolo: KOLO_AUTOTUNE_LOG=at.csv (--autotune-log-file) does nothing without --autotune"
                + " (KOLO_AUTOTUNE=1): rank 0 writes that log only while it tunes";
        assertEquals(List.of(warning), plan("-np", "2", "--autotune-log-file", "at.csv", "--", "true").warnings());
        assertEquals(List.of(warning), plan("-np", "2", "-x", "KOLO_AUTOTUNE_LOG=at.csv", "--", "true").warnings());
        assertEquals(List.of(), plan("-np", "2", "--autotune", "--autotune-log-file", "at.csv", "--", "true")
                .warnings());
        assertEquals(List.of(), plan("-np", "2", "-x", "KOLO_AUTOTUNE=1", "--autotune-log-file", "at.csv", "--",
                "true").warnings());
    }

    /** --timeline-mark-cycles without a timeline to mark them in did nothing, silently. */
    @Test
    void markingCyclesWithoutATimelineIsSaidToDoNothing() {
        assertEquals(List.of("kolo: KOLO_TIMELINE_MARK_CYCLES=1 (--timeline-mark-cycles) does nothing without"
                + " --timeline-filename (KOLO_TIMELINE): there is no timeline to mark the cycles in"),
                plan("-np", "2", "--timeline-mark-cycles", "--", "true").warnings());
        assertEquals(List.of(), plan("-np", "2", "--timeline-mark-cycles", "--timeline-filename", "t.json", "--",
                "true").warnings());
    }

    /** horovodrun's autotune knobs without --autotune shape no tuning: said as for the log. */
    @Test
    void autotuneKnobsWithoutAutotuneAreSaidToDoNothing() {
        assertEquals(List.of("kolo: KOLO_AUTOTUNE_WARMUP_SAMPLES=2 (--autotune-warmup-samples) does nothing without"
                        + " --autotune (KOLO_AUTOTUNE=1): it only shapes the tuning",
                "kolo: KOLO_AUTOTUNE_BAYES_OPT_MAX_SAMPLES=9 (--autotune-bayes-opt-max-samples) does nothing without"
                        + " --autotune (KOLO_AUTOTUNE=1): it only shapes the tuning"),
                plan("-np", "2", "--autotune-warmup-samples", "2", "-x", "KOLO_AUTOTUNE_BAYES_OPT_MAX_SAMPLES=9", "--",
                        "true").warnings());
        assertEquals(List.of(), plan("-np", "2", "--autotune", "--autotune-steps-per-sample", "5", "--", "true")
                .warnings());
    }

    /** A secret given to -x by mistake ({@code -x KOLO_SECRET=$SECRET} in a CI script) is refused without showing it. */
    @Test
    void aSecretGivenToXIsRefusedWithoutShowingIt() {
        String secret = "0123456789abcdef0123456789abcdef";
        UsageException e = assertThrows(UsageException.class,
                () -> plan("-np", "1", "-x", "KOLO_SECRET=" + secret, "--", "true"));
        assertTrue(e.getMessage().contains("-x KOLO_SECRET: KOLO_SECRET is set by kolo run"), e.getMessage());
        assertFalse(e.getMessage().contains(secret), e.getMessage());
    }

    private static void assertUsage(String expected, String... args) {
        UsageException e = assertThrows(UsageException.class, () -> plan(args));
        assertTrue(e.getMessage().contains(expected), e.getMessage());
    }
}
