package io.kolo.view;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kolo.bootstrap.InMemoryStore;
import io.kolo.bootstrap.StoreKeys;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The view made from real snapshots in a real store, read back through its JSON and its Prometheus text. */
class JobViewTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final long T0 = 1_796_000_000_000L;

    private static RankSnapshot snapshot(int rank, long time, long ops, List<RankSnapshot.Point> points,
                                         long[] lateness, long[] lastCounts) {
        return new RankSnapshot(rank, 3, "host-" + rank, 100 + rank, 0, time, ops, ops * 1_000_000L, ops * 400,
                "grad." + ops, time - 10, lateness, lastCounts, List.of(), 0, points);
    }

    private static void publish(InMemoryStore store, RankSnapshot s) {
        store.put(StoreKeys.view(s.rank()), s.toStoreValue());
    }

    private static JsonNode json(JobView view) throws Exception {
        return JSON.readTree(view.json());
    }

    @Test
    void snapshotsPolledFromTheStoreMakeRanksMetricsAndEngineSeries() throws Exception {
        InMemoryStore store = new InMemoryStore();
        JobView view = new JobView("kolo run -np 3 -- train", 3, false, Duration.ofSeconds(1));
        view.watch(store);
        for (int r = 0; r < 3; r++) {
            view.rankStarted(r, "localhost", 10 + r);
        }
        JsonNode starting = json(view);
        assertEquals("RUNNING", starting.get("state").asText());
        assertEquals("STARTING", starting.get("ranks").get(1).get("state").asText());
        for (int r = 0; r < 3; r++) {
            publish(store, snapshot(r, T0, 10, List.of(new RankSnapshot.Point(0, "loss", 2.0 - r, 1, T0)),
                    null, null));
        }
        view.poll();
        view.poll();   // the same snapshots again: no point is kept twice
        for (int r = 0; r < 3; r++) {
            publish(store, snapshot(r, T0 + 2000, 50, List.of(new RankSnapshot.Point(0, "loss", 2.0 - r, 1, T0),
                    new RankSnapshot.Point(1, "loss", 1.0 - r, 2, T0 + 1500)), null, null));
        }
        view.poll();
        JsonNode job = json(view);
        assertEquals(3, job.get("size").asInt());
        assertEquals(3, job.get("ranks").size());
        JsonNode rank1 = job.get("ranks").get(1);
        assertEquals("RUNNING", rank1.get("state").asText());
        assertEquals("host-1", rank1.get("host").asText());
        assertEquals(101, rank1.get("pid").asLong());
        assertEquals(50, rank1.get("ops").asLong());
        assertEquals(0.05, rank1.get("collectiveSeconds").asDouble(), 1e-9);
        assertEquals(20_000, rank1.get("bytes").asLong());
        assertEquals("grad.50", rank1.get("lastOp").asText());
        assertTrue(rank1.get("exitCode").isNull());
        List<JsonNode> loss = new ArrayList<>();
        List<JsonNode> ops = new ArrayList<>();
        for (JsonNode m : job.get("metrics")) {
            if (m.get("rank").asInt() == 1 && m.get("name").asText().equals("loss")) {
                loss.add(m);
            }
            if (m.get("rank").asInt() == 1 && m.get("name").asText().equals(JobView.OPS_PER_SECOND)) {
                ops.add(m);
            }
        }
        assertEquals(2, loss.size(), "each point once, though polled three times: " + loss);
        assertEquals(0.0, loss.get(1).get("value").asDouble());
        assertEquals(2, loss.get(1).get("step").asLong());
        assertEquals(1, ops.size());
        assertEquals(20.0, ops.getFirst().get("value").asDouble(), 1e-9);   // 40 ops in 2 s
        assertTrue(ops.getFirst().get("step").isNull());
        assertTrue(job.get("progressPercentage").isNull());
        // The launcher's start event names the process it started; the rank's first snapshot gives its JVM's pid,
        // which the table shows from then on, and an event says so once.
        List<String> rank1Events = new ArrayList<>();
        for (JsonNode e : job.get("events")) {
            if (e.get("rank").asInt(-1) == 1) {
                rank1Events.add(e.get("kind").asText() + ": " + e.get("message").asText());
            }
        }
        assertEquals(List.of("start: rank 1 started on localhost (launcher's process 11)",
                "pid: rank 1 runs as pid 101 on host-1 (the launcher started process 11)"), rank1Events);
    }

    /**
     * {@code json(since)} holds only the points kept after a cursor an earlier answer gave, and the rest of the view
     * whole; a plain {@code json()} (and the report) still holds every point, and a cursor the view never gave gives
     * every point again.
     */
    @Test
    void sinceACursorOnlyTheNewerPointsAreSent() throws Exception {
        InMemoryStore store = new InMemoryStore();
        JobView view = new JobView("kolo run -np 3 -- train", 3, false, Duration.ofSeconds(1));
        view.watch(store);
        for (int r = 0; r < 3; r++) {
            publish(store, snapshot(r, T0, 10, List.of(new RankSnapshot.Point(1, "loss", 2.0, 0, T0)), null, null));
        }
        view.poll();
        JsonNode first = json(view);
        assertTrue(first.get("metricsSince").isNull());
        assertEquals(3, first.get("metrics").size());
        long cursor = first.get("metricsCursor").asLong();

        JsonNode nothingNew = JSON.readTree(view.json(cursor));
        assertEquals(0, nothingNew.get("metrics").size());
        assertEquals(cursor, nothingNew.get("metricsSince").asLong());
        assertEquals(cursor, nothingNew.get("metricsCursor").asLong());
        assertEquals(3, nothingNew.get("ranks").size(), "the rest of the view is whole");

        for (int r = 0; r < 3; r++) {
            publish(store, snapshot(r, T0 + 1000, 20, List.of(new RankSnapshot.Point(1, "loss", 2.0, 0, T0),
                    new RankSnapshot.Point(2, "loss", 1.0, 1, T0 + 500)), null, null));
        }
        view.poll();
        JsonNode newer = JSON.readTree(view.json(cursor));
        // Per rank: its new loss point and one point of each engine series (ops, bytes, share).
        assertEquals(3 * 4, newer.get("metrics").size(), newer.get("metrics").toString());
        for (JsonNode m : newer.get("metrics")) {
            assertTrue(!m.get("name").asText().equals("loss") || m.get("step").asLong() == 1, m.toString());
        }
        assertTrue(newer.get("metricsCursor").asLong() > cursor);
        assertEquals(0, JSON.readTree(view.json(newer.get("metricsCursor").asLong())).get("metrics").size());
        assertEquals(3 + 12, json(view).get("metrics").size(), "json() has every point");
        JsonNode unknown = JSON.readTree(view.json(newer.get("metricsCursor").asLong() + 100));
        assertTrue(unknown.get("metricsSince").isNull());
        assertEquals(3 + 12, unknown.get("metrics").size());
    }

    @Test
    void exitsOutputAndTheEndShowPerRank() throws Exception {
        JobView view = new JobView("job", 2, false, Duration.ofSeconds(1));
        view.rankStarted(0, "a", 1);
        view.rankStarted(1, "b", 2);
        for (int i = 0; i < 30; i++) {
            view.output(1, "line " + i);
        }
        view.rankExited(1, 137, null);
        view.rankExited(1, 137, "rank 1 on b was killed by SIGKILL");
        view.rankExited(0, 0, null);
        view.ended(JobView.FAILED);
        JsonNode job = json(view);
        assertEquals("FAILED", job.get("state").asText());
        JsonNode r1 = job.get("ranks").get(1);
        assertEquals("FAILED", r1.get("state").asText());
        assertEquals(137, r1.get("exitCode").asInt());
        assertEquals("rank 1 on b was killed by SIGKILL", r1.get("cause").asText());
        assertEquals(JobView.OUTPUT_LINES, r1.get("output").size());
        assertEquals("line 29", r1.get("output").get(JobView.OUTPUT_LINES - 1).asText());
        assertEquals("EXITED", job.get("ranks").get(0).get("state").asText());
        List<String> kinds = new ArrayList<>();
        job.get("events").forEach(e -> kinds.add(e.get("kind").asText()));
        assertEquals(List.of("start", "start", "failure", "exit", "end"), kinds);
        assertEquals(1, job.get("events").get(2).get("rank").asInt());
    }

    @Test
    void stringsAreEscapedForJsonAndForAScriptElement() throws Exception {
        JobView view = new JobView("say \"hi\" \\ </script><b>&\u2028", 1, false, Duration.ofSeconds(1));
        view.rankStarted(0, "h", 1);
        view.output(0, "tab\there\u0001 ü 😀");
        String text = view.json();
        assertFalse(text.contains("</script>"), text);
        assertFalse(text.contains("<"), text);
        JsonNode job = JSON.readTree(text);
        assertEquals("say \"hi\" \\ </script><b>&\u2028", job.get("command").asText());
        assertEquals("tab\there\u0001 ü 😀", job.get("ranks").get(0).get("output").get(0).asText());
    }

    @Test
    void metricPointsAreCappedPerNameAndRankOldestFirstOut() throws Exception {
        InMemoryStore store = new InMemoryStore();
        JobView view = new JobView("job", 1, false, Duration.ofSeconds(1));
        view.watch(store);
        long seq = 0;
        for (int batch = 0; batch < 10; batch++) {
            List<RankSnapshot.Point> points = new ArrayList<>();
            for (int i = 0; i < RankSnapshot.MAX_POINTS; i++, seq++) {
                points.add(new RankSnapshot.Point(seq, "loss", seq, seq, T0 + seq));
            }
            publish(store, new RankSnapshot(0, 1, "h", 1, 0, T0 + seq, 0, 0, 0, "", 0, null, null, null, 0, points));
            view.poll();
        }
        JsonNode metrics = json(view).get("metrics");
        List<Double> loss = new ArrayList<>();
        metrics.forEach(m -> {
            if (m.get("name").asText().equals("loss")) {
                loss.add(m.get("value").asDouble());
            }
        });
        assertEquals(JobView.MAX_POINTS, loss.size());
        assertEquals((double) (seq - JobView.MAX_POINTS), loss.getFirst());
        assertEquals((double) (seq - 1), loss.getLast());
    }

    @Test
    void theRankTheOthersKeepWaitingForIsAStraggler() throws Exception {
        InMemoryStore store = new InMemoryStore();
        JobView view = new JobView("job", 3, false, Duration.ofSeconds(1));
        view.watch(store);
        // 100 ops a second; rank 2 last in 90 of every 100, the others waiting 8 ms for it each time; rank 1 last in
        // 10, waited for 1 ms.
        for (int s = 0; s <= 5; s++) {
            long ops = 100L * s;
            publish(store, snapshot(0, T0 + 1000L * s, ops, List.of(),
                    new long[]{0, 10 * s * 1_000_000L, 90 * s * 8_000_000L}, new long[]{0, 10L * s, 90L * s}));
            view.poll();
        }
        JsonNode ranks = json(view).get("ranks");
        assertTrue(ranks.get(2).get("straggler").asBoolean(), ranks.toString());
        assertFalse(ranks.get(1).get("straggler").asBoolean());
        assertFalse(ranks.get(0).get("straggler").asBoolean());
        assertEquals(90 * 5 * 0.008, ranks.get(2).get("latenessSeconds").asDouble(), 1e-9);
        assertEquals(450, ranks.get(2).get("lastCount").asLong());
        Map<String, Double> prom = samples(view.prometheus());
        assertEquals(1.0, prom.get("kolo_rank_straggler{rank=\"2\",host=\"\"}"));
    }

    @Test
    void progressGivesPercentageAndRemainingTime() throws Exception {
        InMemoryStore store = new InMemoryStore();
        JobView view = new JobView("job", 2, false, Duration.ofSeconds(1));
        view.watch(store);
        long now = System.currentTimeMillis();
        publish(store, snapshot(0, now, 1, List.of(new RankSnapshot.Point(0, "progress", 0.5, -1, now)), null, null));
        publish(store, snapshot(1, now, 1, List.of(new RankSnapshot.Point(0, "progress", 0.25, -1, now)), null, null));
        view.poll();
        JsonNode job = json(view);
        assertEquals(25.0, job.get("progressPercentage").asDouble(), 1e-9);
        double elapsed = job.get("elapsedSeconds").asDouble();
        assertEquals(3 * elapsed, job.get("estimatedRemainingSeconds").asDouble(), 0.5);
    }

    @Test
    void prometheusTextDeclaresEveryFamilyAndEscapesLabels() {
        InMemoryStore store = new InMemoryStore();
        JobView view = new JobView("job", 1, false, Duration.ofSeconds(1));
        view.watch(store);
        view.rankStarted(0, "h\"x", 7);
        publish(store, snapshot(0, T0, 5, List.of(new RankSnapshot.Point(0, "loss \"a\"\n", 0.5, 1, T0)), null, null));
        view.poll();
        String text = view.prometheus();
        Map<String, Double> samples = samples(text);
        assertEquals(5.0, samples.get("kolo_rank_ops_total{rank=\"0\",host=\"host-0\"}"));
        assertEquals(1.0, samples.get("kolo_job_state{state=\"RUNNING\"}"));
        assertEquals(0.5, samples.get("kolo_metric{name=\"loss \\\"a\\\"\\n\",rank=\"0\",host=\"host-0\"}"));
        assertEquals(1.0, samples.get("kolo_rank_up{rank=\"0\",host=\"host-0\"}"));
    }

    private static final Pattern SAMPLE = Pattern.compile("([a-zA-Z_:][a-zA-Z0-9_:]*)(\\{.*})? (\\S+)");

    /** The samples of a 0.0.4 exposition, each after its family's # HELP and # TYPE. */
    static Map<String, Double> samples(String text) {
        Map<String, Double> samples = new HashMap<>();
        java.util.Set<String> typed = new java.util.HashSet<>();
        for (String line : text.split("\n")) {
            if (line.startsWith("# TYPE ")) {
                String[] parts = line.split(" ");
                assertTrue(List.of("counter", "gauge").contains(parts[3]), line);
                typed.add(parts[2]);
            } else if (!line.startsWith("# HELP ")) {
                Matcher m = SAMPLE.matcher(line);
                assertTrue(m.matches(), "not a sample: " + line);
                assertTrue(typed.contains(m.group(1)), "no # TYPE before " + line);
                samples.put(m.group(1) + (m.group(2) == null ? "" : m.group(2)), Double.parseDouble(m.group(3)));
            }
        }
        return samples;
    }
}
