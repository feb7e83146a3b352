package io.kolo.launcher.cluster;

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
        cluster = NetnsCluster.start(3, dir.resolve("cluster"));
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
        ProcessBuilder pb = new ProcessBuilder(cluster.inLauncherNs(cmd));
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
                + " $KOLO_HOSTNAME $(ip -4 -o addr show dev eth0 | awk '{print $4}') $(pwd)\";"
                + " if [ $KOLO_RANK = 0 ]; then printf %s \"$KOLO_SECRET\" > " + dir + "/secret;"
                + " for f in /proc/[0-9]*/cmdline; do tr '\\0' ' ' < $f 2>/dev/null; echo; done"
                + " | grep -c -F -f " + dir + "/secret > " + secretHits + "; rm " + dir + "/secret; fi";
        Result r = kolo(Map.of(), "run", "-np", "4", "--hostfile", hostfile.toString(), "--", "sh", "-c", script);
        assertEquals(0, r.code(), r.out() + r.err());
        String cwd = Path.of("").toAbsolutePath().toString();
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

    static void assertNothingLeftOnHosts() throws InterruptedException {
        // The ssh sessions end as the ranks exit; give sshd a moment to reap its per-session processes.
        for (int i = 0; i < cluster.hosts(); i++) {
            List<Long> left = cluster.jobPidsIn(i);
            for (int attempt = 0; attempt < 100 && !left.isEmpty(); attempt++) {
                Thread.sleep(100);
                left = cluster.jobPidsIn(i);
            }
            assertTrue(left.isEmpty(), "left running on host " + i + ": " + describe(left));
        }
    }

    static String describe(List<Long> pids) {
        List<String> s = new ArrayList<>();
        for (long pid : pids) {
            s.add(pid + " " + ProcessHandle.of(pid).flatMap(h -> h.info().commandLine()).orElse("?"));
        }
        return s.toString();
    }
}
