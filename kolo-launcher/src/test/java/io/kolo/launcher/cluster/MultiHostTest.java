package io.kolo.launcher.cluster;

import io.kolo.launcher.job.Hosts;

import io.kolo.launcher.workers.Worker;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code kolo run} across real hosts: network namespaces with real sshd, reached by name through a hostfile
 * in the MPI Operator's format. Skipped (reason printed) where namespaces or OpenSSH are not available.
 */
@Timeout(180)
class MultiHostTest {
    static final String CP = System.getProperty("java.class.path");
    static final String JAVA = Path.of(System.getProperty("java.home"), "bin", "java").toString();

    @TempDir
    static Path dir;
    static NetnsCluster cluster;

    @BeforeAll
    static void startCluster() {
        // Hosts 0 and 1 run jobs; 2 is the one whose name resolves late; 3 is the one that is down.
        cluster = NetnsCluster.start(4, dir.resolve("cluster"));
    }

    @AfterAll
    static void stopCluster() {
        if (cluster != null) {
            cluster.close();
        }
    }

    record Result(int code, String out, String err) {
    }

    /** Runs the launcher in the launcher namespace (where the hosts' names resolve) to completion. */
    static Result kolo(Map<String, String> env, String... args) throws IOException, InterruptedException {
        Process p = start(env, args);
        return finish(p);
    }

    static Process start(Map<String, String> env, String... args) throws IOException {
        List<String> cmd = new ArrayList<>(List.of(JAVA, "--enable-native-access=ALL-UNNAMED", "-cp", CP,
                "io.kolo.launcher.Main"));
        cmd.addAll(List.of(args));
        // A session of its own, like a shell's foreground job, so a test can signal the launcher's whole
        // process group as Ctrl-C at a terminal does (setsid and ip netns exec both exec: same pid).
        List<String> argv = new ArrayList<>(List.of("setsid"));
        argv.addAll(cluster.inLauncherNs(cmd));
        ProcessBuilder pb = new ProcessBuilder(argv);
        pb.environment().putAll(cluster.launcherEnv());
        pb.environment().putAll(env);
        pb.redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
        return pb.start();
    }

    static Result finish(Process p) throws InterruptedException {
        StringBuilder out = new StringBuilder();
        StringBuilder err = new StringBuilder();
        Thread o = Thread.ofVirtual().start(() -> collect(p.getInputStream(), out));
        Thread e = Thread.ofVirtual().start(() -> collect(p.getErrorStream(), err));
        if (!p.waitFor(150, TimeUnit.SECONDS)) {
            p.destroyForcibly();
        }
        o.join();
        e.join();
        return new Result(p.exitValue(), out.toString(), err.toString());
    }

    static void collect(java.io.InputStream in, StringBuilder sink) {
        try (var r = new java.io.BufferedReader(new java.io.InputStreamReader(in, StandardCharsets.UTF_8))) {
            String line;
            while ((line = r.readLine()) != null) {
                synchronized (sink) {
                    sink.append(line).append('\n');
                }
            }
        } catch (IOException ignored) {
            // The process is gone; what arrived is what the test checks.
        }
    }

    @Test
    void twoHostsTwoSlotsEachFromAnOperatorHostfile() throws Exception {
        Path hostfile = cluster.hostfile(2, 2);
        Path secretHits = dir.resolve("secret-hits");
        // Each rank reports its placement and the address of the namespace it runs in; rank 0 also counts
        // the processes on the machine whose command line contains the job secret (it must be none).
        String script = "echo \"$KOLO_RANK $KOLO_LOCAL_RANK/$KOLO_LOCAL_SIZE $KOLO_CROSS_RANK/$KOLO_CROSS_SIZE"
                + " $KOLO_HOSTNAME $(ip -4 -o addr show dev eth0 | awk '{print $4}') $(pwd) $GREETING\";"
                + " if [ $KOLO_RANK = 0 ]; then printf %s \"$KOLO_SECRET\" > " + dir + "/secret;"
                + " for f in /proc/[0-9]*/cmdline; do tr '\\0' ' ' < $f 2>/dev/null; echo; done"
                + " | grep -c -F -f " + dir + "/secret > " + secretHits + "; rm " + dir + "/secret; fi";
        Result r = kolo(Map.of(), "run", "-np", "4", "--hostfile", hostfile.toString(), "-x", "GREETING=it's -x",
                "--", "sh", "-c", script);
        assertEquals(0, r.code(), r.out() + r.err());
        String cwd = Path.of("").toAbsolutePath() + " it's -x";
        assertEquals(List.of(
                        "[0]<stdout>:0 0/2 0/2 " + cluster.hostName(0) + " " + cluster.address(0) + "/24 " + cwd,
                        "[1]<stdout>:1 1/2 0/2 " + cluster.hostName(0) + " " + cluster.address(0) + "/24 " + cwd,
                        "[2]<stdout>:2 0/2 1/2 " + cluster.hostName(1) + " " + cluster.address(1) + "/24 " + cwd,
                        "[3]<stdout>:3 1/2 1/2 " + cluster.hostName(1) + " " + cluster.address(1) + "/24 " + cwd),
                r.out().lines().sorted().toList());
        assertEquals("0", Files.readString(secretHits).strip(), "processes showing the secret in their arguments");
        assertNothingLeftOnHosts();
    }

    @Test
    void kolo_workersAllreduceAcrossHosts() throws Exception {
        Path pids = Files.createDirectories(dir.resolve("pids-allreduce"));
        Result r = kolo(Map.of(), "run", "-np", "4", "-H", cluster.hostName(0) + ":2," + cluster.hostName(1) + ":2",
                "-cp", CP, Worker.class.getName(), "steady", pids.toString());
        assertEquals(0, r.code(), r.out() + r.err());
        assertEquals(List.of("[0]<stdout>:rank 0 ok", "[1]<stdout>:rank 1 ok", "[2]<stdout>:rank 2 ok",
                "[3]<stdout>:rank 3 ok"), r.out().lines().filter(l -> l.contains(" ok")).sorted().toList());
        assertNothingLeftOnHosts();
    }

    @Test
    void ranksOnTheLaunchersOwnHostJoinRemoteOnes() throws Exception {
        Path pids = Files.createDirectories(dir.resolve("pids-mixed"));
        Result r = kolo(Map.of(), "run", "-np", "3", "-H", "localhost:1," + cluster.hostName(0) + ":1,"
                + cluster.hostName(1) + ":1", "-cp", CP, Worker.class.getName(), "steady", pids.toString());
        assertEquals(0, r.code(), r.out() + r.err());
        assertEquals(List.of("[0]<stdout>:rank 0 ok", "[1]<stdout>:rank 1 ok", "[2]<stdout>:rank 2 ok"),
                r.out().lines().filter(l -> l.contains(" ok")).sorted().toList());
        assertNothingLeftOnHosts();
    }

    @Test
    void aNamedNetworkInterfaceIsUsedOnEveryHost() throws Exception {
        Result r = kolo(Map.of(), "run", "-np", "2", "-H", cluster.hostName(0) + ":1," + cluster.hostName(1) + ":1",
                "--network-interface", "eth0", "--", "sh", "-c", "echo $KOLO_IFACE $KOLO_RENDEZVOUS_ADDR");
        assertEquals(0, r.code(), r.out() + r.err());
        assertEquals(List.of("[0]<stdout>:eth0 " + NetnsCluster.LAUNCHER_ADDRESS,
                "[1]<stdout>:eth0 " + NetnsCluster.LAUNCHER_ADDRESS), r.out().lines().sorted().toList());
    }

    /** mpirun's --map-by node: ranks go round-robin over the hosts, and each really runs on the host it was given. */
    @Test
    void mapByNodePlacesRanksRoundRobinOverTheHosts() throws Exception {
        Result r = kolo(Map.of(), "run", "-np", "4", "-H", cluster.hostName(0) + ":2," + cluster.hostName(1) + ":2",
                "--map-by", "node", "--display-map", "--",
                "sh", "-c", "echo $KOLO_HOSTNAME $KOLO_LOCAL_RANK/$KOLO_LOCAL_SIZE $(echo $SSH_CONNECTION | cut -d' ' -f3)");
        assertEquals(0, r.code(), r.out() + r.err());
        assertEquals(List.of(
                "[0]<stdout>:" + cluster.hostName(0) + " 0/2 " + cluster.address(0),
                "[1]<stdout>:" + cluster.hostName(1) + " 0/2 " + cluster.address(1),
                "[2]<stdout>:" + cluster.hostName(0) + " 1/2 " + cluster.address(0),
                "[3]<stdout>:" + cluster.hostName(1) + " 1/2 " + cluster.address(1)), r.out().lines().sorted().toList());
        assertTrue(r.err().contains("kolo:   host " + cluster.hostName(0) + ": ranks 0,2"), r.err());
    }

    @Test
    void unreachableHostsAreEachNamedWithSshsOwnMessageAndNoRankStarts() throws Exception {
        cluster.stopSshd(3);
        // The reachable host must answer within the start timeout even on a loaded CI machine: 4 s was not always.
        Path marks = Files.createDirectories(dir.resolve("marks-down"));
        Result r = kolo(Map.of(), "run", "-np", "4", "-H", cluster.hostName(0) + ":2," + cluster.hostName(3)
                        + ":1,job-worker-9.job.ns.svc:1", "--start-timeout", "10", "--",
                "sh", "-c", "touch " + marks + "/$KOLO_RANK");
        assertEquals(127, r.code(), r.out() + r.err());
        List<String> lines = r.err().lines().toList();
        assertEquals(2, lines.size(), r.err());
        assertTrue(lines.get(0).startsWith("kolo: host " + cluster.hostName(3) + " is not reachable over ssh"
                + " (retried for "), lines.get(0));
        assertTrue(lines.get(0).endsWith("Connection refused"), lines.get(0));
        assertTrue(lines.get(1).startsWith("kolo: host job-worker-9.job.ns.svc is not reachable over ssh"),
                lines.get(1));
        assertTrue(lines.get(1).contains("Could not resolve hostname job-worker-9.job.ns.svc"), lines.get(1));
        assertEquals("", r.out());
        try (var files = Files.list(marks)) {
            assertEquals(List.of(), files.toList(), "ranks started although a host was unreachable");
        }
    }

    @Test
    void aHostWhoseNameResolvesLateJoinsOnceItDoes() throws Exception {
        String late = cluster.hostName(2);
        cluster.hideName(2);
        try {
            NetnsCluster.ExecResult lookup = NetnsCluster.exec(cluster.inLauncherNs(List.of("getent", "hosts", late)));
            assertTrue(lookup.code() != 0, "the name should not resolve yet: " + lookup.output());
            Process p = start(Map.of(), "run", "-np", "2", "-H", cluster.hostName(0) + ":1," + late + ":1",
                    "--start-timeout", "60", "--", "sh", "-c", "echo $KOLO_RANK on $KOLO_HOSTNAME");
            // The job cannot finish while the name does not resolve; the launcher keeps trying meanwhile.
            assertTrue(!p.waitFor(3, TimeUnit.SECONDS), "the launcher gave up before the name resolved");
            cluster.revealName(2);
            Result r = finish(p);
            assertEquals(0, r.code(), r.out() + r.err());
            assertEquals(List.of("[0]<stdout>:0 on " + cluster.hostName(0), "[1]<stdout>:1 on " + late),
                    r.out().lines().sorted().toList());
        } finally {
            cluster.revealName(2);
        }
    }

    @Test
    void aRankKilledOnARemoteHostFailsTheJobNamingHostAndRank() throws Exception {
        ForeverJob job = startForeverJob("pids-killed");
        Process p = job.process();
        Path pids = job.pids();
        StringBuilder out = job.out();
        StringBuilder err = job.err();
        long victim = Long.parseLong(Files.readString(pids.resolve("rank.3")).strip());
        assertTrue(cluster.pidsIn(1).contains(victim), "rank 3 should run in host 1's namespace");
        NetnsCluster.exec(List.of("kill", "-KILL", Long.toString(victim)));
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "the launcher did not finish after a rank died");
        job.awaitOutput();
        assertEquals(137, p.exitValue(), out + "" + err);
        assertTrue(err.toString().contains("kolo: rank 3 on host " + cluster.hostName(1)
                + " exited with code 137 (killed by SIGKILL"), err.toString());
        assertTrue(err.toString().contains("kill -9); terminating the other 3 ranks"), err.toString());
        assertNothingLeftOnHosts();
    }

    @Test
    void aHostCutOffFromTheNetworkFailsTheJobWithinTheTimeoutAndItsRanksEndOnTheirOwn() throws Exception {
        // Host 1 (ranks 2 and 3) loses its link mid-job: no connection is closed, nothing is refused, packets
        // just stop arriving, as when a switch port or a VM's network dies.
        ForeverJob job = startForeverJob("pids-partition", "-x", "KOLO_TIMEOUT_SECONDS=5");
        Process p = job.process();
        long cut = System.nanoTime();
        setLink(1, "down");
        try {
            assertTrue(p.waitFor(60, TimeUnit.SECONDS), "the launcher did not finish after host 1 was cut off");
            job.awaitOutput();
            String out = job.out().toString();
            String err = job.err().toString();
            assertTrue(p.exitValue() != 0, out + err);
            // The ranks that can still talk fail on their own timeout, naming a rank of the cut-off host and that
            // host, and the launcher names the first of them.
            assertTrue(out.contains("timed out"), out + err);
            assertTrue(out.lines().anyMatch(l -> (l.contains("rank 2 (host " + cluster.hostName(1) + ")")
                    || l.contains("rank 3 (host " + cluster.hostName(1) + ")"))
                    && l.contains("its host cut off from the network")), out + err);
            assertTrue(err.lines().anyMatch(l -> l.startsWith("kolo: rank ") && l.contains(" failed: ")), err);
            // The cut-off ranks cannot hear the launcher; they time out too and end, with their wrappers.
            List<Long> left = kolosProcessesOn(1);
            while (!left.isEmpty() && System.nanoTime() - cut < TimeUnit.SECONDS.toNanos(90)) {
                Thread.sleep(500);
                left = kolosProcessesOn(1);
            }
            assertTrue(left.isEmpty(), "still running on the cut-off host "
                    + (System.nanoTime() - cut) / 1_000_000_000 + " s after the cut: " + describe(left));
        } finally {
            p.destroyForcibly();
            reconnect(1);
        }
    }

    @Test
    void aHostCutOffIsNamedByItsLostSshConnectionLongBeforeTheRanksTimeOut() throws Exception {
        // As above with the default op timeout (300 s): the ranks would wait for it, but the launcher's ssh
        // connections to the host hear nothing back either.
        ForeverJob job = startForeverJob("pids-partition-named");
        Process p = job.process();
        setLink(1, "down");
        try {
            assertTrue(p.waitFor(75, TimeUnit.SECONDS), "the launcher did not notice that host 1 was cut off");
            job.awaitOutput();
            String err = job.err().toString();
            assertTrue(p.exitValue() != 0, job.out() + err);
            assertTrue(err.contains(" on host " + cluster.hostName(1) + " lost its ssh connection"), err);
        } finally {
            p.destroyForcibly();
            reconnect(1);
        }
    }

    /**
     * Brings host {@code host}'s link back and stops what a cut-off job left there: ranks still waiting out their
     * timeout, and sshd's sessions, which wait for TCP to give up on the launcher's side (the host's own business).
     */
    static void reconnect(int host) {
        setLink(host, "up");
        for (long pid : cluster.jobPidsIn(host)) {
            ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly);
        }
    }

    /** Host {@code host}'s one link, {@code up} or {@code down}. */
    static void setLink(int host, String state) {
        NetnsCluster.ExecResult r = NetnsCluster.exec(List.of("ip", "netns", "exec", cluster.hostNs(host), "ip", "link",
                "set", "eth0", state));
        assertEquals(0, r.code(), "ip link set eth0 " + state + ": " + r.output());
    }

    /** What a job left on host {@code host} besides sshd (its listener and its per-connection sessions). */
    static List<Long> kolosProcessesOn(int host) {
        return cluster.jobPidsIn(host).stream().filter(pid -> !ProcessHandle.of(pid)
                .flatMap(h -> h.info().command()).orElse("").endsWith("/sshd")).toList();
    }

    @Test
    void interruptingTheLauncherLeavesNoProcessOnAnyHost() throws Exception {
        ForeverJob job = startForeverJob("pids-interrupted");
        Process p = job.process();
        StringBuilder out = job.out();
        StringBuilder err = job.err();
        // Ctrl-C is SIGINT, unless this process tree was started in the background with SIGINT ignored
        // (the JVM could not see it then); SIGTERM takes the same path in the launcher.
        boolean sigintIgnored = io.kolo.launcher.Sigint.ignored();
        // To the launcher's process group, as the terminal does: its ssh clients must not be the ones to go.
        NetnsCluster.exec(List.of("kill", sigintIgnored ? "-TERM" : "-INT", "--", "-" + p.pid()));
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "the launcher did not stop after the signal");
        job.awaitOutput();
        assertEquals(sigintIgnored ? 143 : 130, p.exitValue(), out + "" + err);
        assertTrue(err.toString().contains("kolo: interrupted; terminating 4 ranks"), err.toString());
        assertTrue(!err.toString().contains("ssh connection"), err.toString());
        assertNothingLeftOnHosts();
        assertTrue(launcherNsProcesses().isEmpty(), "left in the launcher namespace: "
                + describe(launcherNsProcesses()));
    }

    @Test
    void killingTheLauncherOutrightStillTakesTheRemoteRanksDown() throws Exception {
        ForeverJob job = startForeverJob("pids-killed-launcher");
        Process p = job.process();
        // No shutdown hook runs: only the closing of ssh's stdin tells the remote side.
        p.destroyForcibly();
        p.waitFor(30, TimeUnit.SECONDS);
        job.awaitOutput();
        assertNothingLeftOnHosts();
        for (int attempt = 0; attempt < 100 && !launcherNsProcesses().isEmpty(); attempt++) {
            Thread.sleep(100);
        }
        assertTrue(launcherNsProcesses().isEmpty(), "left in the launcher namespace: "
                + describe(launcherNsProcesses()));
    }

    /** A {@code kolo run} of the "forever" worker on 2 hosts x 2 slots; its output is read as it comes. */
    record ForeverJob(Process process, Path pids, StringBuilder out, StringBuilder err, Thread outReader,
                      Thread errReader) {
        /** After the launcher ended: waits (bounded) until its output has been read to the end. */
        void awaitOutput() throws InterruptedException {
            outReader.join(java.time.Duration.ofSeconds(30));
            errReader.join(java.time.Duration.ofSeconds(30));
        }
    }

    /**
     * Starts a {@link ForeverJob} with {@code kolo run} options {@code options}, recording rank pids under
     * {@code dir/pidsName}, and waits until all 4 reduce.
     */
    static ForeverJob startForeverJob(String pidsName, String... options) throws Exception {
        Path pids = Files.createDirectories(dir.resolve(pidsName));
        List<String> args = new ArrayList<>(List.of("run", "-np", "4", "--hostfile", cluster.hostfile(2, 2).toString()));
        args.addAll(List.of(options));
        args.addAll(List.of("-cp", CP, Worker.class.getName(), "forever", pids.toString()));
        Process p = start(Map.of(), args.toArray(String[]::new));
        StringBuilder out = new StringBuilder();
        StringBuilder err = new StringBuilder();
        Thread o = Thread.ofVirtual().start(() -> collect(p.getInputStream(), out));
        Thread e = Thread.ofVirtual().start(() -> collect(p.getErrorStream(), err));
        awaitLines(out, "reducing", 4, p, err);
        return new ForeverJob(p, pids, out, err, o, e);
    }

    static List<Long> launcherNsProcesses() {
        NetnsCluster.ExecResult r = NetnsCluster.exec(List.of("ip", "netns", "pids", cluster.launcherNs()));
        return r.output().lines().map(String::strip).filter(l -> l.matches("\\d+")).map(Long::parseLong).toList();
    }

    static void awaitLines(StringBuilder out, String word, int count, Process p, StringBuilder err)
            throws InterruptedException {
        for (int attempt = 0; attempt < 600; attempt++) {
            synchronized (out) {
                if (out.toString().lines().filter(l -> l.contains(word)).count() >= count) {
                    return;
                }
            }
            if (!p.isAlive()) {
                break;
            }
            Thread.sleep(100);
        }
        throw new AssertionError("ranks did not all report '" + word + "': " + out + err);
    }

    static void assertNothingLeftOnHosts() throws InterruptedException {
        String left = cluster.leftOnHosts();
        assertTrue(left.isEmpty(), "left running: " + left);
    }

    static String describe(List<Long> pids) {
        List<String> s = new ArrayList<>();
        for (long pid : pids) {
            s.add(pid + " " + ProcessHandle.of(pid).flatMap(h -> h.info().commandLine()).orElse("?"));
        }
        return s.toString();
    }
}
