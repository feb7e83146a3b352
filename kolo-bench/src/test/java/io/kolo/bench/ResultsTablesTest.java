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
        assertTrue(blocks >= 7, "the pages lost their results tables: " + blocks);
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
