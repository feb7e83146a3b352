package io.kolo.launcher.cluster;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code kolo bench} with its ranks on two real hosts (network namespaces with sshd, {@link NetnsCluster}), one rank
 * each, over TCP, and with {@code --compare} Open MPI on the same hosts when it is installed. Skipped (reason printed)
 * where namespaces or OpenSSH are not available.
 */
@Timeout(300)
class BenchAcrossHostsTest {
    static final String CP = System.getProperty("java.class.path");
    static final String JAVA = Path.of(System.getProperty("java.home"), "bin", "java").toString();

    @TempDir
    static Path dir;
    static NetnsCluster cluster;

    @BeforeAll
    static void startCluster() {
        cluster = NetnsCluster.start(2, dir.resolve("cluster"));
    }

    @AfterAll
    static void stopCluster() {
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void allreduceOnTwoHostsAgainstOpenMpiOnTheSameHosts() throws Exception {
        Path json = dir.resolve("bench.json");
        List<String> cmd = new ArrayList<>(List.of(JAVA, "--enable-native-access=ALL-UNNAMED", "-cp", CP,
                "io.kolo.launcher.Main", "bench", "allreduce", "-H",
                cluster.hostName(0) + ":1," + cluster.hostName(1) + ":1", "--network-interface", "eth0",
                "--sizes", "1KiB,64KiB", "--iters", "3", "--warmup", "1", "--bind-to", "none", "--compare",
                "--json", json.toString()));
        ProcessBuilder pb = new ProcessBuilder(cluster.inLauncherNs(cmd));
        pb.environment().putAll(cluster.launcherEnv());
        pb.redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
        pb.redirectErrorStream(true);
        Process p = pb.start();
        StringBuilder output = new StringBuilder();
        Thread reader = Thread.ofVirtual().start(() -> MultiHostTest.collect(p.getInputStream(), output));
        if (!p.waitFor(240, TimeUnit.SECONDS)) {
            p.descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly();
        }
        reader.join(TimeUnit.SECONDS.toMillis(10));
        String out = output.toString();
        assertEquals(0, p.exitValue(), out);

        // One rank on each host: the workers name the host they run on.
        assertTrue(out.contains("[0]<stdout>:kolo-bench: rank 0 of 2 on host job-worker-0\n"), out);
        assertTrue(out.contains("[1]<stdout>:kolo-bench: rank 1 of 2 on host job-worker-1\n"), out);

        // Every rank checked each size's first result (a wrong sum fails the run), and rank 0's results came back.
        JsonNode doc = new ObjectMapper().readTree(Files.readString(json));
        assertEquals(2, doc.get("ranks").asInt());
        assertTrue(doc.get("command").asText().contains("-H " + cluster.hostName(0) + ":1," + cluster.hostName(1)
                + ":1 --network-interface eth0"), doc.get("command").asText());
        JsonNode kolo = series(doc, "Kolo tcp");
        assertEquals("ok", kolo.get("status").asText(), kolo.toString());
        assertEquals(List.of(1024L, 65536L), kolo.get("results").valueStream().map(r -> r.get("bytes").asLong())
                .toList());
        for (JsonNode r : kolo.get("results")) {
            assertEquals(3, r.get("iterations").asInt(), r.toString());
            assertTrue(r.get("min_us").asDouble() > 0 && r.get("busbw_gbps").asDouble() > 0, r.toString());
        }
        assertEquals("skipped", series(doc, "OMPI shm").get("status").asText());
        assertEquals("skipped", series(doc, "Gloo").get("status").asText());
        JsonNode mpi = series(doc, "OMPI tcp");
        boolean mpiInstalled = onPath("mpirun") && onPath("mpicc");
        if (mpiInstalled) {
            assertEquals("ok", mpi.get("status").asText(), mpi.toString());
            assertEquals(2, mpi.get("results").size(), mpi.toString());
        } else {
            System.out.println("BenchAcrossHostsTest: Open MPI not installed, its series is skipped");
            assertEquals("skipped", mpi.get("status").asText(), mpi.toString());
        }
        assertEquals(cluster.hostName(0) + ":1," + cluster.hostName(1) + ":1",
                doc.get("environment").get("hosts").asText());
        assertEquals("", cluster.leftOnHosts(), "processes left on the hosts");
    }

    private static JsonNode series(JsonNode doc, String name) {
        for (JsonNode s : doc.get("series")) {
            if (s.get("name").asText().equals(name)) {
                return s;
            }
        }
        throw new AssertionError("no series " + name + " in " + doc.get("series"));
    }

    private static boolean onPath(String program) {
        for (String d : System.getenv().getOrDefault("PATH", "/usr/bin:/bin").split(":")) {
            if (Files.isExecutable(Path.of(d, program))) {
                return true;
            }
        }
        return false;
    }
}
