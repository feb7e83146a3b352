package io.kolo.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.json.JsonMapper;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Real jobs of 2 and 4 ranks, as threads and as processes, over loopback TCP: what the JSON says of them. */
// Ranks as threads are measured by this JVM's own descriptors; the step that overruns its limit leaves ranks that close
// their sockets at their own timeouts, so it runs last, where that cannot shrink another test's count.
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ScaleBenchTest {
    private static final JsonMapper JSON = new JsonMapper();

    private static JsonNode run(ScaleBench.Mode mode, Path dir) throws Exception {
        ScaleBench.Config config = new ScaleBench.Config(2, 4, mode, 64, Duration.ofSeconds(120), "tcp",
                ScaleBench.workerClasspath(), "./kolo bench scale --max-ranks 4 --mode " + mode.id());
        ByteArrayOutputStream progress = new ByteArrayOutputStream();
        ScaleReport report = ScaleBench.run(config, new PrintStream(progress, true, StandardCharsets.UTF_8));
        Path plot = dir.resolve("scale.svg");
        new ScalePlot(report).write(plot);
        assertTrue(Files.readString(plot).contains("<svg"), "an SVG");
        assertTrue(report.table().contains("ranks"), report.table());
        return JSON.readTree(report.json());
    }

    private static void checkPlausible(JsonNode json, String mode) {
        assertEquals("scale", json.path("benchmark").asText());
        assertTrue(json.path("host_cpus").asInt() >= 1);
        JsonNode steps = json.path("steps");
        assertEquals(2, steps.size(), json.toPrettyString());
        for (int i = 0; i < 2; i++) {
            JsonNode s = steps.get(i);
            int n = 2 << i;
            assertEquals(n, s.path("ranks").asInt());
            assertEquals(mode, s.path("mode").asText());
            assertEquals("ok", s.path("status").asText(), s.path("reason").asText());
            for (String f : new String[]{"init_ms", "first_op_ms", "small_allreduce_us", "large_allreduce_us"}) {
                assertTrue(s.path(f).asDouble() > 0, f + " in " + s);
            }
            assertEquals(ScaleReport.perCoreShare(s.path("small_allreduce_us").asDouble(), n,
                    json.path("host_cpus").asInt()), s.path("small_allreduce_us_per_core_share").asDouble(), 0.01,
                    "the time per core-share in " + s);
            // Every rank announces itself and reads the others' addresses from the store.
            assertTrue(s.path("store_requests_per_rank").asDouble() >= 2, "store requests in " + s);
            assertTrue(s.path("store_bytes_per_rank").asDouble() > 0, "store bytes in " + s);
            // A connection per pair of ranks that exchange (of 2 or 4, every pair), measured from /proc/self/fd.
            assertTrue(s.path("socket_fds_per_rank").asDouble() >= n - 1, "sockets in " + s);
            assertTrue(s.path("fds_per_rank").asDouble() >= s.path("socket_fds_per_rank").asDouble(), "fds in " + s);
            assertTrue(s.path("rss_bytes_per_rank").isNumber() && s.path("heap_bytes_per_rank").isNumber(), s.toString());
        }
        // A rank reads every other rank's address in one request: its share of the store's requests does not grow
        // with the job.
        assertTrue(steps.get(1).path("store_requests_per_rank").asDouble()
                <= steps.get(0).path("store_requests_per_rank").asDouble(), steps.toString());
    }

    @Test
    @Order(1)
    void ranksAsThreadsOfThisJvm(@TempDir Path dir) throws Exception {
        checkPlausible(run(ScaleBench.Mode.THREADS, dir), "threads");
    }

    @Test
    @Order(2)
    void ranksAsProcesses(@TempDir Path dir) throws Exception {
        JsonNode json = run(ScaleBench.Mode.PROCESSES, dir);
        checkPlausible(json, "processes");
    }

    @Test
    @Order(3)
    void aStepThatCannotFinishInTimeStopsTheRunWithItsReason(@TempDir Path dir) throws Exception {
        ScaleBench.Config config = new ScaleBench.Config(2, 1024, ScaleBench.Mode.THREADS, 0, Duration.ofSeconds(1),
                "tcp", ScaleBench.workerClasspath(), "test");
        ScaleReport report = ScaleBench.run(config, new PrintStream(new ByteArrayOutputStream(), true,
                StandardCharsets.UTF_8));
        ScaleStep last = report.steps().getLast();
        assertTrue(!last.ok() && !last.reason().isEmpty(), report.table());
        assertTrue(last.ranks() < 1024, report.table());
    }

    @Test
    void theTimingRunsAboutASecondOfOpsWithinItsBounds() {
        assertEquals(ScaleRank.MIN_SMALL_ITERS, ScaleRank.timedIterations(2e6, ScaleRank.MIN_SMALL_ITERS),
                "an op of seconds is still timed a few times");
        assertEquals(200, ScaleRank.timedIterations(5000, ScaleRank.MIN_SMALL_ITERS));
        assertEquals(ScaleRank.MAX_ITERS, ScaleRank.timedIterations(1e-3, ScaleRank.MIN_SMALL_ITERS));
    }
}
