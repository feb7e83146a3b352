package io.kolo.bench;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The docs' results tables come from docs/results/*.json, and the committed pages hold what the JSON says. */
class ResultsTablesTest {
    private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();

    @Test
    void everyCommittedTableIsWhatItsJsonSays() throws IOException {
        int blocks = 0;
        for (Path page : ResultsTables.pages(ROOT)) {
            String text = Files.readString(page);
            blocks += text.split("<!-- results ", -1).length - 1;
            assertEquals(text, ResultsTables.rewrite(ROOT, page, text),
                    ROOT.relativize(page) + " is out of date with its JSON: run " + ResultsTables.COMMAND);
        }
        assertTrue(blocks >= 8, "the pages lost their results tables: " + blocks);
    }

    @Test
    void aBlockIsReplacedByTheTableOfItsJsonWithItsSourceAndCommand(@TempDir Path root) throws IOException {
        Files.createDirectories(root.resolve("docs/results"));
        Files.writeString(root.resolve("docs/results/b.json"), """
                {"collective": "allreduce", "ranks": 2, "dtype": "f32", "command": "./kolo bench allreduce",
                 "series": [
                  {"name": "Kolo shm", "status": "ok", "results": [{"bytes": 1024, "median_us": 1.5}]},
                  {"name": "OMPI shm", "status": "ok", "results": [{"bytes": 1024, "median_us": 2.5}]},
                  {"name": "Gloo", "status": "skipped", "results": []}]}
                """);
        Path page = root.resolve("docs/p.md");
        String text = "before\n<!-- results bench docs/results/b.json -->\nstale figures\n<!-- /results -->\nafter\n";
        String out = ResultsTables.rewrite(root, page, text);
        assertTrue(out.startsWith("before\n<!-- results bench docs/results/b.json -->\n"), out);
        assertTrue(out.endsWith("<!-- /results -->\nafter\n"), out);
        assertFalse(out.contains("stale figures"), out);
        assertTrue(out.contains("| size | Kolo shm | OMPI shm | OMPI shm / Kolo shm |\n"), out);
        assertTrue(out.contains("| 1KiB | 1.5 | 2.5 | 1.67x |\n"), out);
        assertFalse(out.contains("Gloo"), "a skipped series has no column: " + out);
        assertTrue(out.contains("[b.json](results/b.json)") && out.contains(ResultsTables.COMMAND), out);
        assertEquals(out, ResultsTables.rewrite(root, page, out), "rewriting twice changes nothing");
    }

    @Test
    void aScaleTableHasARowPerFinishedSizeAndSaysWhereGrowingStopped() throws IOException {
        String table = ResultsTables.table("scale", new com.fasterxml.jackson.databind.json.JsonMapper().readTree("""
                {"command": "./kolo bench scale --max-ranks 8", "transport": "tcp", "host_cpus": 2,
                 "oversubscribed": true, "small_bytes": 8, "large_bytes": 1048576, "steps": [
                  {"ranks": 4, "mode": "processes", "status": "ok", "reason": "", "init_ms": 785, "first_op_ms": 237,
                   "small_allreduce_us": 4380, "large_allreduce_us": 44425, "store_requests_per_rank": 4,
                   "store_bytes_per_rank": 2048, "fds_per_rank": 11, "socket_fds_per_rank": 5,
                   "heap_bytes_per_rank": 1048576, "rss_bytes_per_rank": 20971520, "shm_bytes_per_rank": 0},
                  {"ranks": 8, "mode": "threads", "status": "failed", "reason": "ran out of file descriptors"}]}
                """));
        assertTrue(table.startsWith("`./kolo bench scale --max-ranks 8` (transport tcp, 2 CPUs, oversubscribed"), table);
        assertTrue(table.contains("| 8B allreduce us | per core-share us | 1MiB allreduce us |"), table);
        // 4 ranks on 2 CPUs: two ranks per CPU, so the time per core-share is half the time.
        assertTrue(table.contains(
                "| 4 | processes | 785 | 237 | 4380 | 2190 | 44425 | 4.0 | 2.0 | 11.0 | 5.0 | 1.0 | 20.0 | 0.0 |"), table);
        assertFalse(table.contains("| 8 |"), "a failed size has no row: " + table);
        assertTrue(table.contains("Stopped at 8 ranks as threads: failed, ran out of file descriptors"), table);
    }

    @Test
    void anAveragingTableHasARowPerRunOfEachSettingBesideKoloBench() throws IOException {
        String table = ResultsTables.table("averaging", new com.fasterxml.jackson.databind.json.JsonMapper().readTree("""
                {"sets": [
                  {"label": "KOLO_SHM_SINGLE_COPY=1", "command": "kolo run ...", "runs": [
                    {"step_ms": 850.5, "averaging_ms": 84.25, "wait_ms": 40.0, "collectives_ms": 30.0,
                     "responses": 2.0, "copies_ms": 1.0, "rest_ms": 3.0, "bench_ms": 9.5}]},
                  {"label": "default", "command": "kolo run ...", "runs": [
                    {"step_ms": 840.0, "averaging_ms": 60.0, "wait_ms": 35.0, "collectives_ms": 20.0,
                     "responses": 3.0, "copies_ms": 1.0, "rest_ms": 2.0}]}]}
                """));
        assertTrue(table.startsWith("`kolo-bench/scripts/averaging-breakdown.sh`"), table);
        assertTrue(table.contains("| KOLO_SHM_SINGLE_COPY=1 | 1 | 850.5 | 84.3 | 40.0 | 30.0 (2.0) | 1.0 | 3.0 | 9.5 |"),
                table);
        assertTrue(table.contains("| default | 1 | 840.0 | 60.0 | 35.0 | 20.0 (3.0) | 1.0 | 2.0 | – |"), table);
    }

    /** A DDP row gives both frameworks' paired medians and Kolo's own averaging; an older run without them, dashes. */
    @Test
    void aDdpTableHasBothPairedMediansAndKolosOwnAveraging() throws IOException {
        String table = ResultsTables.table("ddp", new com.fasterxml.jackson.databind.json.JsonMapper().readTree("""
                {"command": "kolo run ...", "runs": [
                  {"result": {"model": "resnet18", "ranks": 2, "ceiling": {"scaling_efficiency": 0.901},
                    "kolo": {"np1_img_sec": 49.9, "total_img_sec": 85.8, "scaling_efficiency": 0.859,
                             "median_iteration_efficiency": 0.894, "averaging_own_share": 0.0228},
                    "ddp": {"np1_img_sec": 56.3, "total_img_sec": 91.3, "scaling_efficiency": 0.812,
                            "median_iteration_efficiency": 0.802}}},
                  {"result": {"model": "resnet18", "ranks": 2, "ceiling": {"scaling_efficiency": 0.8},
                    "kolo": {"np1_img_sec": 25.8, "total_img_sec": 37.5, "scaling_efficiency": 0.727},
                    "ddp": {"np1_img_sec": 30.9, "total_img_sec": 41.6, "scaling_efficiency": 0.674}}}]}
                """));
        assertTrue(table.contains("| 1 | resnet18, 2 | 49.9 | 85.8 | 85.9 % (89.4 %) | 56.3 | 91.3 | 81.2 % (80.2 %)"
                + " | 90.1 % | 2.3 % |"), table);
        assertTrue(table.contains("| 2 | resnet18, 2 | 25.8 | 37.5 | 72.7 % | 30.9 | 41.6 | 67.4 % | 80.0 % | – |"),
                table);
    }

    @Test
    void anUnknownTableOrAMissingFileIsNamed(@TempDir Path root) {
        Path page = root.resolve("README.md");
        assertTrue(assertThrows(IllegalArgumentException.class, () -> ResultsTables.table("nope",
                com.fasterxml.jackson.databind.node.JsonNodeFactory.instance.objectNode())).getMessage()
                .contains("unknown results table 'nope'"));
        RuntimeException e = assertThrows(RuntimeException.class, () -> ResultsTables.rewrite(root, page,
                "<!-- results bench docs/results/gone.json -->\n<!-- /results -->"));
        assertTrue(e.getMessage().contains("gone.json"), e.getMessage());
    }
}
