package io.kolo.spark;

import io.kolo.ReduceOp;
import org.apache.spark.BarrierTaskContext;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * KoloSpark.run on Spark's real local-cluster master: two Workers of two cores, whose executors are JVM processes of
 * their own, so three ranks span two JVMs (two ranks in one, talking over shared memory like the third).
 */
class LocalClusterRunTest {
    private static SparkSession spark;

    @BeforeAll
    static void start() {
        spark = SparkClusters.localCluster(2, 2, 1024, Map.of(
                "spark.executorEnv.KOLO_START_TIMEOUT_SECONDS", "10",
                // One retry: enough for the killed executor's job, and a throwing task fails after two attempts.
                "spark.stage.maxConsecutiveAttempts", "2"));
        SparkClusters.awaitSlots(spark, 4);
    }

    /** Stopping the application ends every executor JVM, the one that replaced the killed executor too. */
    @AfterAll
    static void stop() throws InterruptedException {
        if (spark == null) {
            return;
        }
        spark.stop();
        long deadline = System.nanoTime() + 30_000_000_000L;
        List<ProcessHandle> left = executors();
        while (!left.isEmpty() && System.nanoTime() < deadline) {
            Thread.sleep(200);
            left = executors();
        }
        assertEquals(List.of(), left.stream().map(p -> p.pid() + " " + p.info().commandLine().orElse("?")).toList(),
                "executor processes left after the application stopped");
    }

    private static List<ProcessHandle> executors() {
        return ProcessHandle.current().descendants().filter(ProcessHandle::isAlive)
                .filter(p -> p.info().commandLine().orElse("").contains("CoarseGrainedExecutorBackend")).toList();
    }

    /** "rank/size sum pid": the pid says which executor JVM ran the rank. */
    private static List<String> threeRanks() {
        return KoloSpark.run(spark, 3, comm -> {
            double[] x = {comm.rank() + 1, 0.5};
            comm.allreduce(x, ReduceOp.SUM);
            return comm.rank() + "/" + comm.size() + " " + x[0] + " " + x[1] + " " + ProcessHandle.current().pid();
        });
    }

    @Test
    void twoAndThreeRanksAcrossExecutorJvmsAllreduceExactlyInRankOrder() {
        List<String> out = threeRanks();
        Set<String> pids = new HashSet<>();
        for (int r = 0; r < 3; r++) {
            String[] f = out.get(r).split(" ");
            assertEquals(r + "/3 6.0 1.5", f[0] + " " + f[1] + " " + f[2], out.toString());
            pids.add(f[3]);
        }
        assertEquals(2, pids.size(), "three ranks on two executors of two slots: " + out);
        assertFalse(pids.contains(String.valueOf(ProcessHandle.current().pid())), "ranks run in executors: " + out);

        List<float[]> two = KoloSpark.run(spark, spark.range(100).toDF("v"), 2, (comm, rows) -> {
            float[] sum = {0};
            rows.forEachRemaining(row -> sum[0] += row.getLong(0));
            comm.allreduce(sum, ReduceOp.SUM);
            return new float[]{comm.rank(), sum[0]};
        });
        assertEquals(0f, two.get(0)[0]);
        assertEquals(1f, two.get(1)[0]);
        assertEquals(4950f, two.get(0)[1]);
        assertEquals(4950f, two.get(1)[1]);
    }

    @Test
    void aThrowingRankFailsEveryAttemptNamingItsRankAndException() {
        long start = System.nanoTime();
        KoloSparkException e = assertThrows(KoloSparkException.class, () -> KoloSpark.run(spark, 3, comm -> {
            float[] x = new float[4096];
            comm.allreduce(x, ReduceOp.SUM);
            if (comm.rank() == 2) {
                throw new IllegalArgumentException("label 11 out of range");
            }
            for (int i = 0; i < 1000; i++) {
                comm.allreduce(x, ReduceOp.SUM);
            }
            return "done";
        }));
        assertTrue(e.getMessage().startsWith("Kolo job of 3 ranks on Spark failed: rank 2 of 3 failed:"
                + " IllegalArgumentException: label 11 out of range"), e.getMessage());
        assertTrue(System.nanoTime() - start < 60_000_000_000L, "fails fast");
        assertEquals(3, threeRanks().size(), "the cluster runs the next job");
    }

    @Test
    void moreRanksThanTheClustersSlotsFailNamingBothNumbers() {
        KoloSparkException e = assertThrows(KoloSparkException.class, () -> KoloSpark.run(spark, 5, comm -> 0));
        assertTrue(e.getMessage().startsWith("numProc=5 needs 5 task slots at once"), e.getMessage());
        assertTrue(e.getMessage().contains("the cluster has 4 after 10 s"), e.getMessage());
    }

    /**
     * An executor killed (SIGKILL) in the middle of an allreduce: the ranks on the other executor fail at once, Spark
     * retries the barrier stage on a new executor, and the retry is a new Kolo job that completes. Nothing is left
     * behind: no process of the killed executor, no shared-memory segment of any executor.
     */
    @Test
    void anExecutorKilledMidAllreduceFailsTheAttemptAndTheRetryCompletes() throws Exception {
        long start = System.nanoTime();
        List<String> out = KoloSpark.run(spark, 3, comm -> {
            int attempt = BarrierTaskContext.get().stageAttemptNumber();
            long pid = ProcessHandle.current().pid();
            float[] x = new float[1 << 16];
            for (int i = 0; i < 30; i++) {
                java.util.Arrays.fill(x, 1f);
                if (attempt == 0 && i == 5 && comm.rank() == 1) {
                    new ProcessBuilder("kill", "-9", String.valueOf(pid)).start().waitFor();
                }
                comm.allreduce(x, ReduceOp.SUM);
                if (x[x.length - 1] != comm.size()) {
                    throw new AssertionError("allreduce gave " + x[x.length - 1]);
                }
            }
            return attempt + " " + pid;
        });
        assertTrue(System.nanoTime() - start < 120_000_000_000L, "no hang");
        Set<Long> pids = new HashSet<>();
        for (String o : out) {
            assertEquals("1", o.split(" ")[0], "the retry (stage attempt 1) completed: " + out);
            pids.add(Long.parseLong(o.split(" ")[1]));
        }
        // The executors now alive (the killed one replaced) hold no Kolo shared-memory segment, and no segment is
        // left from a dead executor.
        try (Stream<Path> shm = Files.list(Path.of("/dev/shm"))) {
            List<String> left = shm.map(p -> p.getFileName().toString()).filter(n -> n.startsWith("kolo-"))
                    .filter(n -> {
                        long pid = Long.parseLong(n.substring(n.lastIndexOf('-') + 1));
                        return pids.contains(pid) || ProcessHandle.of(pid).isEmpty()
                                && isOurs(n);
                    }).toList();
            assertEquals(List.of(), left);
        } catch (IOException noShm) {
            // No /dev/shm: the ranks used TCP, nothing to leave behind.
        }
    }

    /** A segment of this user's (other users' jobs on a shared machine are none of this test's business). */
    private static boolean isOurs(String name) {
        try {
            return Files.getOwner(Path.of("/dev/shm", name)).getName().equals(System.getProperty("user.name"));
        } catch (IOException gone) {
            return false;
        }
    }

    /**
     * With the dashboard option, rank 0's task serves the job view on its executor while the job runs: /api/job there
     * shows both ranks running and their reported loss; the report rank 0 writes when it leaves shows the job ended.
     */
    @Test
    void rankZerosTaskServesTheJobViewWhileTheJobRunsAndWritesTheReport() throws Exception {
        Path dir = Files.createTempDirectory("kolo-spark-view");
        String seen = dir.resolve("seen").toString();
        String report = dir.resolve("job.html").toString();
        int port;
        try (java.net.ServerSocket s = new java.net.ServerSocket(0)) {
            port = s.getLocalPort();
        }
        var mapper = new com.fasterxml.jackson.databind.ObjectMapper();
        java.util.concurrent.atomic.AtomicReference<com.fasterxml.jackson.databind.JsonNode> live =
                new java.util.concurrent.atomic.AtomicReference<>();
        String api = "http://127.0.0.1:" + port + "/api/job";
        Thread poller = Thread.ofPlatform().daemon().start(() -> {
            long deadline = System.nanoTime() + 120_000_000_000L;
            while (System.nanoTime() < deadline) {
                try {
                    var c = (java.net.HttpURLConnection) java.net.URI.create(api).toURL().openConnection();
                    c.setConnectTimeout(2000);
                    c.setReadTimeout(5000);
                    try (var in = c.getInputStream()) {
                        var job = mapper.readTree(in);
                        boolean bothRunning = job.get("ranks").size() == 2;
                        for (var r : job.get("ranks")) {
                            bothRunning &= r.get("state").asText().equals("RUNNING") && r.get("ops").asLong() > 0;
                        }
                        boolean loss = false;
                        for (var m : job.get("metrics")) {
                            loss |= m.get("name").asText().equals("loss");
                        }
                        if (bothRunning && loss) {
                            live.set(job);
                            Files.createFile(Path.of(seen));
                            return;
                        }
                    }
                } catch (IOException notYet) {
                    // Not served yet (the stage is starting), or not both ranks in it yet.
                }
                try {
                    Thread.sleep(200);
                } catch (InterruptedException e) {
                    return;
                }
            }
        });
        List<Long> steps = KoloSpark.run(spark, 2, KoloSpark.Options.none().dashboard(port).report(report), comm -> {
            // Every rank stops at the same step: the one whose allreduce says the test has seen the view.
            for (long step = 0; ; step++) {
                float[] flag = {Files.exists(Path.of(seen)) ? 1 : 0};
                comm.allreduce(flag, ReduceOp.SUM);
                comm.report("loss", 1.0 / (step + 1), step);
                if (flag[0] > 0 || step >= 3000) {
                    return step;
                }
                Thread.sleep(20);
            }
        });
        poller.join(10_000);
        assertTrue(live.get() != null, "/api/job on rank 0's executor never showed both ranks running: " + steps);
        assertEquals(steps.get(0), steps.get(1));
        assertTrue(steps.get(0) < 3000, "the ranks stopped once the view was seen: " + steps);
        assertEquals("RUNNING", live.get().get("state").asText());
        assertEquals(2, live.get().get("size").asInt());
        // The job as a Spark user knows it, not the executor's java command line.
        String command = live.get().get("command").asText();
        assertTrue(command.matches("Spark application kolo-spark-test \\(\\S+\\), stage \\d+"), command);
        String html = Files.readString(Path.of(report));
        assertTrue(html.contains("id=\"kolo-job\""), "the report embeds the job");
        assertTrue(html.contains("\"state\":\"SUCCEEDED\""), "the report shows the job ended");
        assertTrue(html.contains("\"name\":\"loss\""), "the report holds the reported loss");
    }
}
