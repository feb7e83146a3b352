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
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The benchmark scripts of docs/performance.md with the values users get wrong: one line naming the option, exit code
 * 2, nothing run. Before, {@code heap-vs-native.sh --rounds abc} ended in an awk error about missing files,
 * {@code --collective allreduse} printed "round 1 of 3, native..." and exited with no word of why, and
 * {@code autotune-compare.sh --rounds x} printed its table's header and a seq error.
 */
@Timeout(60)
class BenchScriptOptionsTest {

    private static String run(List<String> command) throws Exception {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        p.getOutputStream().close();
        String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(2, p.waitFor(), command + ": " + output);
        assertEquals(1, output.lines().count(), command + ": " + output);
        return output;
    }

    @Test
    void autotuneCompareBadValuesAreOneLineNamingTheOption(@TempDir Path dir) throws Exception {
        Path out = dir.resolve("out");
        for (List<String> args : List.of(List.of("--rounds", "x"), List.of("-np", "0"), List.of("-np"))) {
            List<String> command = new ArrayList<>(List.of("bash", "scripts/autotune-compare.sh", "--out", out.toString()));
            command.addAll(args);
            String output = run(command);
            assertTrue(output.startsWith("autotune-compare: " + args.getFirst() + " "), output);
        }
        assertFalse(Files.exists(out), "something ran");
    }

    /** {@code first-run.sh --runs} with no value ended in bash's "$2: unbound variable". */
    @Test
    void firstRunMissingOrBadValuesAreOneLineNamingTheOption() throws Exception {
        for (List<String> args : List.of(List.of("--runs"), List.of("--json"), List.of("--runs", "--json", "x.json"),
                List.of("--json", "--runs", "3"), List.of("--runs", "abc"), List.of("--runs", "0"))) {
            List<String> command = new ArrayList<>(List.of("bash", "scripts/first-run.sh"));
            command.addAll(args);
            String output = run(command);
            assertTrue(output.startsWith("first-run.sh: " + args.getFirst() + " "), args + ": " + output);
        }
        String unknown = run(List.of("bash", "scripts/first-run.sh", "--bogus"));
        assertTrue(unknown.startsWith("first-run.sh: unknown argument '--bogus'"), unknown);
    }

    @Test
    void badValuesAreOneLineNamingTheOption(@TempDir Path dir) throws Exception {
        Path out = dir.resolve("out");
        for (List<String> args : List.of(List.of("--rounds", "abc"), List.of("--rounds", "0"),
                List.of("--collective", "allreduse"), List.of("--rounds"))) {
            List<String> command = new ArrayList<>(List.of("bash", "scripts/heap-vs-native.sh", "--out", out.toString()));
            command.addAll(args);
            command.addAll(List.of("--", "-np", "2", "--sizes", "1KiB"));
            if (args.size() == 1) {
                command = new ArrayList<>(List.of("bash", "scripts/heap-vs-native.sh", "--out", out.toString(), "--rounds"));
            }
            Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
            p.getOutputStream().close();
            String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            String given = String.join(" ", args);
            assertEquals(2, p.waitFor(), given + ": " + output);
            assertEquals(1, output.lines().count(), given + ": " + output);
            assertTrue(output.startsWith("heap-vs-native: " + args.getFirst() + " "), given + ": " + output);
        }
        assertFalse(Files.exists(out), "something ran");
    }

    @Test
    void averagingBreakdownBadValuesAreOneLineNamingTheOption(@TempDir Path dir) throws Exception {
        Path out = dir.resolve("out.json");
        for (List<String> args : List.of(List.of("--runs", "abc"), List.of("--runs", "0"), List.of("--skip", "-1"),
                List.of("--kolo-home", dir.resolve("nowhere").toString()), List.of("--bogus"), List.of("--label"))) {
            List<String> command = new ArrayList<>(List.of("bash", "scripts/averaging-breakdown.sh", "--out",
                    out.toString()));
            command.addAll(args);
            if (args.size() == 2) {
                command.addAll(List.of("--", "--model", "mlp"));
            }
            Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
            p.getOutputStream().close();
            String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            String given = String.join(" ", args);
            assertEquals(2, p.waitFor(), given + ": " + output);
            assertEquals(1, output.lines().count(), given + ": " + output);
            assertTrue(output.startsWith("averaging-breakdown: ") && output.contains(args.getFirst() + " "),
                    given + ": " + output);
        }
        assertFalse(Files.exists(out), "something ran");
    }

    /** {@code store-wakeups.sh abc} ended in a NumberFormatException's stack trace. */
    @Test
    void storeWakeupsBadValuesAreOneLineNamingTheValue() throws Exception {
        for (List<String> args : List.of(List.of("abc"), List.of("3000", "0"), List.of("3000", "500", "-1"))) {
            List<String> command = new ArrayList<>(List.of("bash", "scripts/store-wakeups.sh"));
            command.addAll(args);
            Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
            p.getOutputStream().close();
            String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertEquals(2, p.waitFor(), args + ": " + output);
            assertEquals(1, output.lines().count(), args + ": " + output);
            assertTrue(output.startsWith("store-wakeups: '" + args.getLast() + "' is not a whole number"),
                    args + ": " + output);
        }
    }

    /** {@code store-start.sh} with a value that is not a number of ranks says which, in one line, and runs nothing. */
    @Test
    void storeStartBadValuesAreOneLineNamingTheValue() throws Exception {
        for (List<String> args : List.of(List.of("abc"), List.of("0"), List.of("1024", "-1"))) {
            List<String> command = new ArrayList<>(List.of("bash", "scripts/store-start.sh"));
            command.addAll(args);
            Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
            p.getOutputStream().close();
            String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertEquals(2, p.waitFor(), args + ": " + output);
            assertEquals(1, output.lines().count(), args + ": " + output);
            assertTrue(output.startsWith("store-start: '" + args.getLast() + "' is not a whole number"),
                    args + ": " + output);
        }
    }
}
