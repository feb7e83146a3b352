package io.kolo.launcher.cluster;

import io.kolo.launcher.workers.ElasticCounter;
import io.kolo.launcher.workers.Worker;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code kolo run} as the launcher of a training operator's MPIJob v1 (what Flyte's MPI plugin creates): the workers
 * ("pods", network namespaces) run no sshd; the launcher gets {@code OMPI_MCA_plm_rsh_agent} naming a stand-in for the
 * operator's {@code kubexec.sh} ({@code kubectl exec POD -- /bin/sh -c "$*"}: first argument the pod, the command run
 * with {@code env -i} and no stdin in the pod's namespace) and {@code OMPI_MCA_orte_default_hostfile} listing pod names
 * that do not resolve. Skipped (reason printed) without root or ip netns.
 */
@Timeout(180)
class KubexecTest {
    static final String CP = System.getProperty("java.class.path");
    static final String JAVA = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    /** The launcher line flytekit's MPI plugin generates, "mpirun" replaced by "kolo run". */
    static final List<String> FLYTEKIT = List.of("run", "--allow-run-as-root", "-bind-to", "none", "-map-by", "slot",
            "-x", "LD_LIBRARY_PATH", "-x", "PATH", "-x", "NCCL_DEBUG=INFO", "-mca", "pml", "ob1", "-mca", "btl",
            "^openib", "-np", "4");

    @TempDir
    static Path dir;
    static NetnsCluster cluster;
    static Path kubexec;
    static Path calls;
    static Path hostfile;

    @BeforeAll
    static void startPods() throws IOException {
        cluster = NetnsCluster.startPods(3, dir.resolve("cluster"));
        for (int i = 0; i < cluster.hosts(); i++) {
            cluster.hideName(i);
        }
        calls = dir.resolve("kubexec-calls");
        kubexec = agent("kubexec.sh", "");
        hostfile = dir.resolve("hostfile");
        Files.writeString(hostfile, "job-worker-0 slots=2\njob-worker-1 slots=2\n");
    }

    @AfterAll
    static void stopPods() {
        if (cluster != null) {
            cluster.close();
        }
    }

    /**
     * A stand-in kubexec.sh: records its first argument (the pod), answers as kubectl does for a pod that does not
     * exist, and runs the command in the pod's namespace with an empty environment and no stdin. {@code before} runs
     * first (a failure to inject).
     */
    static Path agent(String name, String before) throws IOException {
        return agent(name, before, "");
    }

    /** As {@link #agent(String, String)}; {@code also} runs in the pod's namespace ({@code $ns}) before the command. */
    static Path agent(String name, String before, String also) throws IOException {
        StringBuilder pods = new StringBuilder();
        for (int i = 0; i < cluster.hosts(); i++) {
            pods.append("  job-worker-").append(i).append(") ns=").append(cluster.hostNs(i)).append(" ;;\n");
        }
        Path script = dir.resolve(name);
        Files.writeString(script, "#!/bin/sh\n"
                + "POD_NAME=$1\nshift\n"
                + "echo \"$POD_NAME\" >> " + calls + "\n"
                + before
                + "case \"$POD_NAME\" in\n" + pods
                + "  *) echo \"Error from server (NotFound): pods \\\"$POD_NAME\\\" not found\" >&2; exit 1 ;;\n"
                + "esac\n"
                + also
                + "exec ip netns exec \"$ns\" env -i /bin/sh -c \"$*\" </dev/null\n");
        Files.setPosixFilePermissions(script, PosixFilePermissions.fromString("rwxr-xr-x"));
        return script;
    }

    record Result(int code, String out, String err) {
    }

    static Process start(Map<String, String> env, List<String> args) throws IOException {
        List<String> cmd = new ArrayList<>(List.of(JAVA, "--enable-native-access=ALL-UNNAMED", "-cp", CP,
                "io.kolo.launcher.Main"));
        cmd.addAll(args);
        List<String> argv = new ArrayList<>(List.of("setsid"));
        argv.addAll(cluster.inLauncherNs(cmd));
        ProcessBuilder pb = new ProcessBuilder(argv);
        pb.environment().remove("KOLO_SSH_COMMAND");
        pb.environment().put("LD_LIBRARY_PATH", "/opt/kolo-test/lib");
        pb.environment().put("OMPI_MCA_plm_rsh_agent", kubexec.toString());
        pb.environment().put("OMPI_MCA_orte_default_hostfile", hostfile.toString());
        pb.environment().putAll(env);
        pb.redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
        return pb.start();
    }

    static Result kolo(Map<String, String> env, List<String> args) throws Exception {
        Files.deleteIfExists(calls);
        MultiHostTest.Result r = MultiHostTest.finish(start(env, args));
        return new Result(r.code(), r.out(), r.err());
    }

    static List<String> flytekit(String... rest) {
        List<String> args = new ArrayList<>(FLYTEKIT);
        args.addAll(List.of(rest));
        return args;
    }

    @Test
    void theFlytekitLineRunsFourRanksOnTwoPodsThroughKubexec() throws Exception {
        NetnsCluster.ExecResult lookup = NetnsCluster.exec(cluster.inLauncherNs(List.of("getent", "hosts",
                "job-worker-0")));
        assertTrue(lookup.code() != 0, "the pod names must not resolve from the launcher: " + lookup.output());
        Path secretHits = dir.resolve("secret-hits");
        // Each rank: placement, the address of the namespace it runs in, what -x gave it, its stdin; rank 0 counts the
        // processes on the machine whose command line holds the job secret (it must be none).
        String script = "echo \"$KOLO_RANK $KOLO_LOCAL_RANK/$KOLO_LOCAL_SIZE $KOLO_CROSS_RANK/$KOLO_CROSS_SIZE"
                + " $KOLO_HOSTNAME $(ip -4 -o addr show dev eth0 | awk '{print $4}') $NCCL_DEBUG $LD_LIBRARY_PATH"
                + " $(readlink /proc/self/fd/0)\";"
                + " if [ $KOLO_RANK = 0 ]; then printf %s \"$KOLO_SECRET\" > " + dir + "/secret;"
                + " for f in /proc/[0-9]*/cmdline; do tr '\\0' ' ' < $f 2>/dev/null; echo; done"
                + " | grep -c -F -f " + dir + "/secret > " + secretHits + "; rm " + dir + "/secret; fi";
        Result r = kolo(Map.of(), flytekit("--", "sh", "-c", script));
        assertEquals(0, r.code(), r.out() + r.err());
        assertEquals(List.of(
                "[0]<stdout>:0 0/2 0/2 job-worker-0 " + cluster.address(0) + "/24 INFO /opt/kolo-test/lib /dev/null",
                "[1]<stdout>:1 1/2 0/2 job-worker-0 " + cluster.address(0) + "/24 INFO /opt/kolo-test/lib /dev/null",
                "[2]<stdout>:2 0/2 1/2 job-worker-1 " + cluster.address(1) + "/24 INFO /opt/kolo-test/lib /dev/null",
                "[3]<stdout>:3 1/2 1/2 job-worker-1 " + cluster.address(1) + "/24 INFO /opt/kolo-test/lib /dev/null"),
                r.out().lines().sorted().toList());
        assertEquals("0", Files.readString(secretHits).strip(), "processes showing the secret in their arguments");
        assertEquals(List.of("job-worker-0", "job-worker-0", "job-worker-1", "job-worker-1"),
                Files.readAllLines(calls).stream().sorted().toList(), "the agent's first arguments");
        assertNothingLeftOnPods();
    }

    @Test
    void kolosWorkersAllreduceAcrossPodsThroughKubexec() throws Exception {
        Path pids = Files.createDirectories(dir.resolve("pids-allreduce"));
        Result r = kolo(Map.of(), flytekit("-cp", CP, Worker.class.getName(), "steady", pids.toString()));
        assertEquals(0, r.code(), r.out() + r.err());
        assertEquals(List.of("[0]<stdout>:rank 0 ok", "[1]<stdout>:rank 1 ok", "[2]<stdout>:rank 2 ok",
                "[3]<stdout>:rank 3 ok"), r.out().lines().filter(l -> l.contains(" ok")).sorted().toList());
        assertNothingLeftOnPods();
    }

    @Test
    void theAgentNamedOnTheCommandLineWinsAsInMpirun() throws Exception {
        Path pids = Files.createDirectories(dir.resolve("pids-mca"));
        Result r = kolo(Map.of("OMPI_MCA_plm_rsh_agent", "/nonexistent/kubexec.sh"),
                List.of("run", "-mca", "plm_rsh_agent", kubexec.toString(), "-np", "2", "-H", "job-worker-1:2",
                        "-cp", CP, Worker.class.getName(), "steady", pids.toString()));
        assertEquals(0, r.code(), r.out() + r.err());
        assertEquals(List.of("job-worker-1", "job-worker-1"), Files.readAllLines(calls));
        Result intel = kolo(Map.of("OMPI_MCA_plm_rsh_agent", ""), List.of("run", "-launcher", "rsh",
                "-launcher-exec", kubexec.toString(), "-np", "2", "-H", "job-worker-0:2", "-cp", CP,
                Worker.class.getName(), "steady", pids.toString()));
        assertEquals(0, intel.code(), intel.out() + intel.err());
        assertEquals(List.of("job-worker-0", "job-worker-0"), Files.readAllLines(calls));
        assertNothingLeftOnPods();
    }

    @Test
    void sigkillOfTheLauncherLeavesNoRankOnAnyPod() throws Exception {
        Path pids = Files.createDirectories(dir.resolve("pids-sigkill"));
        Process p = start(Map.of(), flytekit("-cp", CP, Worker.class.getName(), "forever", pids.toString()));
        StringBuilder out = new StringBuilder();
        StringBuilder err = new StringBuilder();
        Thread.ofVirtual().start(() -> MultiHostTest.collect(p.getInputStream(), out));
        Thread.ofVirtual().start(() -> MultiHostTest.collect(p.getErrorStream(), err));
        MultiHostTest.awaitLines(out, "reducing", 4, p, err);
        assertFalse(cluster.jobPidsIn(0).isEmpty() || cluster.jobPidsIn(1).isEmpty(), "no rank on a pod");
        NetnsCluster.exec(List.of("kill", "-KILL", Long.toString(p.pid())));
        p.waitFor(30, TimeUnit.SECONDS);
        // The ranks' agents see the launcher's connection close and stop their ranks (TERM, grace, KILL).
        assertNothingLeftOnPods();
    }

    @Test
    void aPodThatDoesNotExistIsOneLineNamingItAndTheAgentsMessage() throws Exception {
        Path file = dir.resolve("hostfile-missing");
        Files.writeString(file, "job-worker-0 slots=2\njob-worker-9 slots=2\n");
        Path pids = Files.createDirectories(dir.resolve("pids-missing"));
        Result r = kolo(Map.of("OMPI_MCA_orte_default_hostfile", file.toString()),
                flytekit("-cp", CP, Worker.class.getName(), "forever", pids.toString()));
        assertEquals(127, r.code(), r.out() + r.err());
        List<String> named = r.err().lines().filter(l -> l.contains("job-worker-9")).toList();
        assertEquals(1, named.size(), r.err());
        assertTrue(named.getFirst().startsWith("kolo: cannot start rank 2 on host job-worker-9 through the rsh agent "
                + kubexec + " (OMPI_MCA_plm_rsh_agent): Error from server (NotFound): pods \"job-worker-9\" not"
                + " found"), r.err());
        assertFalse(r.err().contains("]<stderr>:Error from server"), r.err());
        assertNothingLeftOnPods();
    }

    @Test
    void anAgentRefusedByRbacIsOneLineNamingThePodAndTheAgentsMessage() throws Exception {
        String forbidden = "Error from server (Forbidden): pods \\\"$POD_NAME\\\" is forbidden: User"
                + " \\\"system:serviceaccount:default:launcher\\\" cannot create resource \\\"pods/exec\\\"";
        Path rbac = agent("kubexec-rbac.sh", "[ \"$POD_NAME\" = job-worker-1 ] && { echo \"" + forbidden
                + "\" >&2; exit 1; }\n");
        Path pids = Files.createDirectories(dir.resolve("pids-rbac"));
        Result r = kolo(Map.of("OMPI_MCA_plm_rsh_agent", rbac.toString()),
                flytekit("-cp", CP, Worker.class.getName(), "forever", pids.toString()));
        assertEquals(127, r.code(), r.out() + r.err());
        List<String> named = r.err().lines().filter(l -> l.contains("job-worker-1")).toList();
        assertEquals(1, named.size(), r.err());
        assertTrue(named.getFirst().matches("kolo: cannot start rank [23] on host job-worker-1 through the rsh agent "
                + java.util.regex.Pattern.quote(rbac.toString()) + " \\(OMPI_MCA_plm_rsh_agent\\): Error from server"
                + " \\(Forbidden\\): pods \"job-worker-1\" is forbidden: .*pods/exec.*"), r.err());
        assertNothingLeftOnPods();
    }

    @Test
    void aPodCutOffFromTheNetworkIsNamedAndItsRanksEndOnTheirOwn() throws Exception {
        Path pids = Files.createDirectories(dir.resolve("pids-cut"));
        Process p = start(Map.of(), flytekit("-cp", CP, Worker.class.getName(), "forever", pids.toString()));
        StringBuilder out = new StringBuilder();
        StringBuilder err = new StringBuilder();
        Thread o = Thread.ofVirtual().start(() -> MultiHostTest.collect(p.getInputStream(), out));
        Thread e = Thread.ofVirtual().start(() -> MultiHostTest.collect(p.getErrorStream(), err));
        MultiHostTest.awaitLines(out, "reducing", 4, p, err);
        long cut = System.nanoTime();
        setLink(1, "down");
        try {
            // The default op timeout (300 s) would keep the ranks waiting; the heartbeat notices within seconds.
            assertTrue(p.waitFor(60, TimeUnit.SECONDS), "the launcher did not notice the pod was cut off: " + err);
            o.join(java.time.Duration.ofSeconds(10));
            e.join(java.time.Duration.ofSeconds(10));
            assertTrue(p.exitValue() != 0, out + "" + err);
            assertTrue(err.toString().lines().anyMatch(l -> l.matches("kolo: rank [23] on host job-worker-1 was lost:"
                    + " no heartbeat from its agent for \\d+ s \\(the rank there stops by itself\\).*")), err.toString());
            // The cut-off pod's agents miss the launcher's beats too and stop their ranks: nothing stays there.
            List<Long> left = cluster.jobPidsIn(1);
            while (!left.isEmpty() && System.nanoTime() - cut < TimeUnit.SECONDS.toNanos(30)) {
                Thread.sleep(200);
                left = cluster.jobPidsIn(1);
            }
            assertTrue(left.isEmpty(), "still on the cut-off pod " + (System.nanoTime() - cut) / 1_000_000_000
                    + " s after the cut: " + MultiHostTest.describe(left));
        } finally {
            p.destroyForcibly();
            setLink(1, "up");
        }
        assertNothingLeftOnPods();
    }

    private static void setLink(int pod, String state) {
        NetnsCluster.ExecResult r = NetnsCluster.exec(List.of("ip", "netns", "exec", cluster.hostNs(pod), "ip", "link",
                "set", "eth0", state));
        assertEquals(0, r.code(), "ip link set eth0 " + state + ": " + r.output());
    }

    @Test
    void aTokenPresentedTwiceStopsTheJob() throws Exception {
        // Someone who read an agent's command line (ps on the launcher's host) runs it too, racing the rank.
        Path twice = agent("kubexec-twice.sh", "", "[ \"$POD_NAME\" = job-worker-1 ] && ip netns exec \"$ns\""
                + " env -i /bin/sh -c \"$*\" </dev/null >/dev/null 2>&1 &\n");
        Path pids = Files.createDirectories(dir.resolve("pids-twice"));
        Result r = kolo(Map.of("OMPI_MCA_plm_rsh_agent", twice.toString()),
                flytekit("-cp", CP, Worker.class.getName(), "forever", pids.toString()));
        assertEquals(1, r.code(), r.out() + r.err());
        assertTrue(r.err().lines().anyMatch(l -> l.matches("kolo: the one-time token of the rank on job-worker-1 was"
                + " presented twice \\(from [0-9.]+, then from [0-9.]+\\): someone else may hold the job's settings"
                + " and secret; terminating \\d ranks?")), r.err());
        assertNothingLeftOnPods();
    }

    @Test
    void anAgentThatCannotBeRunIsOneLineBeforeAnythingStarts() throws Exception {
        Result r = kolo(Map.of("OMPI_MCA_plm_rsh_agent", "/etc/mpi/no-such-kubexec.sh"),
                flytekit("-cp", CP, Worker.class.getName(), "steady", dir.toString()));
        assertEquals(2, r.code(), r.out() + r.err());
        assertEquals(1, r.err().lines().count(), r.err());
        assertTrue(r.err().contains("the rsh agent '/etc/mpi/no-such-kubexec.sh' (OMPI_MCA_plm_rsh_agent) cannot be"
                + " run here: /etc/mpi/no-such-kubexec.sh: No such file or directory"), r.err());
        assertFalse(Files.exists(calls), "the agent ran");
    }

    @Test
    void anElasticJobThroughKubexecGoesOnWhenAPodIsLostAndComesBack(@TempDir Path test) throws Exception {
        Path logs = Files.createDirectories(test.resolve("logs"));
        Path discovered = test.resolve("hosts");
        Files.writeString(discovered, "job-worker-0:2\njob-worker-1:2\n");
        Path discover = test.resolve("discover_hosts.sh");
        Files.writeString(discover, "#!/bin/sh\ncat " + discovered + "\n");
        Files.setPosixFilePermissions(discover, PosixFilePermissions.fromString("rwxr-xr-x"));
        List<String> args = List.of("run", "-np", "4", "--min-np", "2", "--host-discovery-script", discover.toString(),
                "--blacklist-cooldown-range", "1", "1", "--start-timeout", "30", "-cp", CP,
                ElasticCounter.class.getName(), logs.toString(), "400", "50");
        Files.deleteIfExists(calls);
        Process p = start(Map.of(), args);
        StringBuilder out = new StringBuilder();
        StringBuilder err = new StringBuilder();
        Thread o = Thread.ofVirtual().start(() -> MultiHostTest.collect(p.getInputStream(), out));
        Thread e = Thread.ofVirtual().start(() -> MultiHostTest.collect(p.getErrorStream(), err));
        try {
            awaitCommit(logs, "w3", 5, p, err);
            // The pod goes: every process in it dies, and the operator's discovery script stops listing it.
            replace(discovered, "job-worker-0:2\n");
            List<String> kill = new ArrayList<>(List.of("kill", "-KILL"));
            cluster.jobPidsIn(1).forEach(pid -> kill.add(Long.toString(pid)));
            NetnsCluster.exec(kill);
            awaitErr(err, "job 1 has 2 ranks", p);
            // A new pod of the same name comes up and is listed again.
            replace(discovered, "job-worker-0:2\njob-worker-1:2\n");
            assertTrue(p.waitFor(150, TimeUnit.SECONDS), "the job did not end: " + out + err);
            o.join(java.time.Duration.ofSeconds(10));
            e.join(java.time.Duration.ofSeconds(10));
            assertEquals(0, p.exitValue(), out + "" + err);
            List<String> done = out.toString().lines().filter(l -> l.contains(" done at 400 ")).toList();
            assertEquals(4, done.size(), out + "" + err);
            assertTrue(done.stream().allMatch(l -> l.endsWith(" of 4")), out + "" + err);
            assertTrue(err.toString().lines().anyMatch(l -> l.startsWith("kolo: reset ") && l.contains("job-worker-1")
                    && l.contains("4 ranks")), err.toString());
            assertTrue(Files.readAllLines(calls).stream().filter(l -> l.equals("job-worker-1")).count() >= 4,
                    "job-worker-1 was not started on again: " + Files.readAllLines(calls));
            io.kolo.launcher.TestAccess.assertCommitsNeverGoBack(logs);
            assertNothingLeftOnPods();
        } finally {
            p.destroyForcibly();
        }
    }

    private static void replace(Path file, String text) throws IOException {
        Path next = file.resolveSibling(file.getFileName() + ".next");
        Files.writeString(next, text);
        Files.move(next, file, java.nio.file.StandardCopyOption.ATOMIC_MOVE,
                java.nio.file.StandardCopyOption.REPLACE_EXISTING);
    }

    private static void awaitCommit(Path logs, String worker, int step, Process p, StringBuilder err)
            throws Exception {
        Path log = logs.resolve("log." + worker);
        for (int i = 0; i < 1200 && p.isAlive(); i++) {
            if (Files.exists(log) && Files.readAllLines(log).stream().anyMatch(l -> l.startsWith("commit " + step + " "))) {
                return;
            }
            Thread.sleep(50);
        }
        throw new AssertionError(worker + " never committed step " + step + ": " + err);
    }

    private static void awaitErr(StringBuilder err, String text, Process p) throws InterruptedException {
        for (int i = 0; i < 1200 && p.isAlive(); i++) {
            synchronized (err) {
                if (err.toString().contains(text)) {
                    return;
                }
            }
            Thread.sleep(50);
        }
        throw new AssertionError("the launcher never said '" + text + "': " + err);
    }

    private static void assertNothingLeftOnPods() throws InterruptedException {
        String left = cluster.leftOnHosts();
        assertTrue(left.isEmpty(), "left running: " + left);
    }
}
