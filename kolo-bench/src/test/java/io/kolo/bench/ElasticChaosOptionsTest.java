package io.kolo.bench;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code scripts/ElasticChaos.java} (what {@code elastic-chaos.sh} runs) as docs/elastic.md has users run it, with the
 * values users get wrong: one line naming the option, exit code 2, no run started. Before, a value that was not a
 * number or a missing value ended in a stack trace, and {@code --runs 0} wrote an empty report.
 */
@Timeout(120)
class ElasticChaosOptionsTest {

    private static Result chaos(Path out, String... args) throws Exception {
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Dkolo.home=" + out, "scripts/ElasticChaos.java"));
        command.addAll(List.of(args));
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        p.getOutputStream().close();
        String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        return new Result(p.waitFor(), output);
    }

    private record Result(int code, String output) {
    }

    @Test
    void badValuesAreOneLineNamingTheOption(@TempDir Path home) throws Exception {
        for (String[] args : List.of(new String[]{"--runs", "abc"}, new String[]{"--seed"},
                new String[]{"--runs", "0"}, new String[]{"--hang-timeout", "-1"})) {
            Result r = chaos(home, args);
            String given = String.join(" ", args);
            assertEquals(2, r.code(), given + ": " + r.output());
            assertEquals(1, r.output().lines().count(), given + ": " + r.output());
            assertTrue(r.output().startsWith("elastic-chaos: " + args[0] + " "), given + ": " + r.output());
        }
        assertTrue(!Files.exists(home.resolve("target")), "a report was written");
    }
}
