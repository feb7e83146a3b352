package io.kolo;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class TimelineTest {

    @SuppressWarnings("unchecked")
    private static List<Map<String, Object>> events(Path file) throws Exception {
        return (List<Map<String, Object>>) Json.parse(file);
    }

    @Test
    void timelineIsValidChromeTraceWhileRunningAndAfter(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("timeline.json");
        Ranks.run(2, Map.of("KOLO_TIMELINE", file.toString()), comm -> {
            for (int step = 0; step < 3; step++) {
                comm.allreduceAsync("grad.w", Tensor.of(new float[1000]), ReduceOp.AVERAGE).await();
                comm.allreduceAsync("grad.b", Tensor.of(new float[10]), ReduceOp.AVERAGE).await();
            }
            if (comm.rank() == 0) {
                // Still running: the file must already be a closed, valid JSON array.
                Thread.sleep(50);
                if (events(file).isEmpty()) {
                    throw new AssertionError("no events while running");
                }
            }
            // A group is always fused, so it goes through the fusion buffer (a tensor alone is reduced in place).
            comm.groupedAllreduce(List.of(Tensor.of(new float[3]), Tensor.of(new float[5])), ReduceOp.SUM);
            comm.broadcast(new float[4], 0);
            return null;
        });
        List<Map<String, Object>> events = events(file);
        Set<String> activities = events.stream().map(e -> (String) e.get("name")).collect(Collectors.toSet());
        assertTrue(activities.containsAll(Set.of("QUEUE", "NEGOTIATE_ALLREDUCE", "MEMCPY_IN_FUSION_BUFFER", "ALLREDUCE", "BROADCAST", "process_name")),
                "activities: " + activities);
        Set<Object> rows = events.stream().filter(e -> "process_name".equals(e.get("name")))
                .map(e -> ((Map<?, ?>) e.get("args")).get("name")).collect(Collectors.toSet());
        assertTrue(rows.containsAll(Set.of("grad.w", "grad.b")), "rows: " + rows);
        for (Map<String, Object> e : events) {
            if ("X".equals(e.get("ph"))) {
                assertTrue(((Number) e.get("dur")).doubleValue() >= 0 && ((Number) e.get("ts")).doubleValue() >= 0, e.toString());
            }
        }
    }

    @Test
    void everyBlockingNamedAllreduceHasItsSpans(@TempDir Path dir) throws Exception {
        // With a timeline, a repeated small blocking allreduce goes as an op (with the vote still), so none is missing.
        Path file = dir.resolve("timeline.json");
        Ranks.run(2, Map.of("KOLO_TIMELINE", file.toString()), comm -> {
            float[] loss = new float[1];
            for (int step = 0; step < 40; step++) {
                comm.allreduce("loss", Tensor.of(loss), ReduceOp.AVERAGE);
            }
            return null;
        });
        long spans = events(file).stream().filter(e -> "ALLREDUCE".equals(e.get("name"))).count();
        assertEquals(40, spans, "ALLREDUCE spans of 40 ops");
    }

    /**
     * An op that failed (ranks that disagreed on it, a rank that died) left nothing in the timeline, so a failed job's
     * file ended with its last good op, not the one it failed on. Its QUEUE and NEGOTIATE spans are now written, the
     * error in the negotiation's args.
     */
    @Test
    void aFailedOpIsInTheTimelineWithItsError(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("timeline.json");
        List<Ranks.Outcome<Object>> outcomes = Ranks.outcomes(2, Map.of("KOLO_TIMELINE", file.toString()), comm -> {
            comm.allreduceAsync("ok", Tensor.of(new float[4]), ReduceOp.SUM).await();
            assertThrows(KoloException.class, () -> comm.allreduceAsync("mismatched",
                    Tensor.of(new float[4 + comm.rank()]), ReduceOp.SUM).await());
            if (comm.rank() == 1) {
                comm.barrier();
                comm.abort(new IllegalStateException("injected"));
                return null;
            }
            comm.barrier();
            assertThrows(RankFailedException.class, () -> comm.allreduceAsync("orphaned", Tensor.of(new float[4]),
                    ReduceOp.SUM).await());
            comm.close();
            return null;
        });
        for (Ranks.Outcome<Object> o : outcomes) {
            o.get();
        }
        List<Map<String, Object>> events = events(file);
        assertTrue(error(events, "mismatched").contains("mismatched allreduce 'mismatched': rank 0 submitted FLOAT32[4]"),
                error(events, "mismatched"));
        assertTrue(error(events, "orphaned").contains("rank 1 failed: IllegalStateException: injected"),
                error(events, "orphaned"));
    }

    /** The error of the NEGOTIATE_ALLREDUCE span in op {@code name}'s row, or "" when there is none. */
    private static String error(List<Map<String, Object>> events, String name) {
        Object row = events.stream().filter(e -> "process_name".equals(e.get("name"))
                && name.equals(((Map<?, ?>) e.get("args")).get("name"))).map(e -> e.get("pid")).findFirst().orElse(null);
        return events.stream().filter(e -> "NEGOTIATE_ALLREDUCE".equals(e.get("name")) && e.get("pid").equals(row)
                && e.get("args") != null).map(e -> String.valueOf(((Map<?, ?>) e.get("args")).get("error")))
                .findFirst().orElse("");
    }

    /** A timeline that cannot be written said why, but not that the job goes on without it, nor what to fix. */
    @Test
    void aTimelineThatCannotBeWrittenIsOneWarningSayingTheJobGoesOnWithoutIt(@TempDir Path dir) {
        Path file = dir.resolve("no-such-dir").resolve("timeline.json");
        try (io.kolo.bootstrap.CapturedLog log = io.kolo.bootstrap.CapturedLog.of("io.kolo.engine.Timeline")) {
            List<Object> sums = Ranks.run(2, Map.of("KOLO_TIMELINE", file.toString()), comm -> {
                float[] x = {1};
                comm.allreduce(x, ReduceOp.SUM);
                return x[0];
            });
            assertEquals(List.of(2f, 2f), sums);
            assertEquals(List.of("KOLO_TIMELINE: cannot write " + file + ": no such file or directory; the job goes on"
                    + " without a timeline (create the directory or name another file)"),
                    log.records().stream().map(java.util.logging.LogRecord::getMessage).toList());
        }
    }
}
