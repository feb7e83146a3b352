package io.kolo.launcher;

import io.kolo.launcher.job.Job;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kolo.launcher.workers.Worker;
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
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Command lines written for {@code mpirun} and {@code horovodrun} (Horovod's docs, Gradient's docs, the one Flyte's MPI
 * plugin generates), with only that word replaced by {@code kolo run}, run as real jobs: a launcher process with the
 * environment under test, real ranks doing allreduces, and their effects checked.
 */
@Timeout(180)
class CompatibleCommandLinesTest {
    private static final String CP = System.getProperty("java.class.path");

    private record Job(int code, String out, String err) {
        List<String> settingsLines() {
            return out.lines().filter(l -> l.contains(" settings ")).sorted().toList();
        }

        String all() {
            return out + err;
        }
    }

    /** {@code kolo ARGS} as a process of its own, with {@code env} on top of this one's (minus any KOLO_/HOROVOD_). */
    private static Job kolo(Map<String, String> env, Path workingDirectory, List<String> args) throws Exception {
        List<String> cmd = new ArrayList<>(List.of(ChildCommand.javaExecutable(), "-cp", CP, Main.class.getName()));
        cmd.addAll(args);
        ProcessBuilder pb = new ProcessBuilder(cmd).directory(workingDirectory.toFile());
        pb.environment().keySet().removeIf(k -> k.startsWith("KOLO_") || k.startsWith("HOROVOD_"));
        pb.environment().putAll(env);
        Path out = Files.createTempFile(workingDirectory, "out", ".txt");
        Path err = Files.createTempFile(workingDirectory, "err", ".txt");
        pb.redirectOutput(out.toFile()).redirectError(err.toFile());
        Process p = pb.start();
        if (!p.waitFor(150, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("kolo " + args + " did not finish: " + Files.readString(out) + Files.readString(err));
        }
        return new Job(p.exitValue(), Files.readString(out, StandardCharsets.UTF_8),
                Files.readString(err, StandardCharsets.UTF_8));
    }

    private static List<String> words(String line) {
        return new ArrayList<>(List.of(line.trim().split("\\s+")));
    }

    /** The worker's arguments: a real Kolo program that prints the settings it runs with. */
    private static List<String> worker(Path dir) throws IOException {
        Path pids = Files.createDirectories(dir.resolve("pids"));
        return List.of("-cp", CP, Worker.class.getName(), "settings", pids.toString());
    }

    @Test
    void theIssuesMpirunLineRunsUnchanged(@TempDir Path dir) throws Exception {
        List<String> args = words("run -np 2 -H localhost:2 -bind-to none -map-by slot -x NCCL_DEBUG=INFO"
                + " -x LD_LIBRARY_PATH -x PATH -mca pml ob1 -mca btl ^openib -- sh -c");
        args.add("echo hi:$NCCL_DEBUG");
        Job j = kolo(Map.of(), dir, args);
        assertEquals(0, j.code(), j.all());
        assertEquals(List.of("[0]<stdout>:hi:INFO", "[1]<stdout>:hi:INFO"), j.out().lines().sorted().toList());
    }

    @Test
    void aGeneratedHostfileAndAllowRunAsRoot(@TempDir Path dir) throws Exception {
        Path hostfile = Files.writeString(dir.resolve("hostfile"), "localhost slots=2\n");
        Job j = kolo(Map.of(), dir, words("run --allow-run-as-root -np 2 --hostfile " + hostfile + " -- echo hi"));
        assertEquals(0, j.code(), j.all());
        assertEquals(List.of("[0]<stdout>:hi", "[1]<stdout>:hi"), j.out().lines().sorted().toList());
    }

    /** The launcher command Flyte's MPI plugin generates (and an MPIJob's launcher runs). */
    @Test
    void flytesMpiPluginCommandRunsARealJob(@TempDir Path dir) throws Exception {
        List<String> args = words("run --allow-run-as-root -bind-to none -map-by slot -x LD_LIBRARY_PATH -x PATH"
                + " -x NCCL_DEBUG=INFO -mca pml ob1 -mca btl ^openib -np 2");
        args.addAll(worker(dir));
        Job j = kolo(Map.of(), dir, args);
        assertEquals(0, j.code(), j.all());
        assertEquals(2, j.out().lines().filter(l -> l.endsWith(" ok")).count(), j.all());
    }

    /** Horovod's documented mpirun line and Gradient's (a generated hostfile), each a real job. */
    @Test
    void horovodsAndGradientsMpirunLinesRunRealJobs(@TempDir Path dir) throws Exception {
        List<String> horovod = words("run -np 2 -H localhost:2 -bind-to none -map-by slot -x NCCL_DEBUG=INFO"
                + " -x LD_LIBRARY_PATH -x PATH -mca pml ob1 -mca btl ^openib");
        horovod.addAll(worker(dir));
        Job h = kolo(Map.of(), dir, horovod);
        assertEquals(0, h.code(), h.all());
        assertEquals(2, h.out().lines().filter(l -> l.endsWith(" ok")).count(), h.all());

        Path hostfile = Files.writeString(dir.resolve("hostfile"), "localhost slots=2\n");
        List<String> gradient = words("run --allow-run-as-root -np 2 --hostfile " + hostfile + " -bind-to none"
                + " -map-by slot -x NCCL_DEBUG=INFO -x LD_LIBRARY_PATH -x PATH -mca pml ob1 -mca btl ^openib");
        gradient.addAll(worker(dir));
        Job g = kolo(Map.of(), dir, gradient);
        assertEquals(0, g.code(), g.all());
        assertEquals(2, g.out().lines().filter(l -> l.endsWith(" ok")).count(), g.all());
    }

    /** horovodrun's tuning flags reach the ranks' engines, and the timeline is written, valid, with cycle marks. */
    @Test
    void horovodrunsFlagsReachTheRanks(@TempDir Path dir) throws Exception {
        Path timeline = dir.resolve("timeline.json");
        List<String> args = words("run -np 2 -H localhost:2 --fusion-threshold-mb 32 --cycle-time-ms 3.5"
                + " --cache-capacity 2048 --timeline-filename " + timeline + " --timeline-mark-cycles"
                + " --stall-check-warning-time-seconds 30 --log-level WARNING --gloo");
        args.addAll(worker(dir));
        Job j = kolo(Map.of(), dir, args);
        assertEquals(0, j.code(), j.all());
        List<String> settings = j.settingsLines();
        assertEquals(2, settings.size(), j.all());
        for (String line : settings) {
            assertTrue(line.contains(" fusion=33554432 cycle=3.5 cache=2048 timeline=" + timeline
                    + " markCycles=on stallCheck=30 "), line);
        }
        JsonNode events = new ObjectMapper().readTree(timeline.toFile());
        assertTrue(events.isArray() && !events.isEmpty(), "timeline is not a JSON array of events");
        long cycles = 0;
        long allreduces = 0;
        for (JsonNode e : events) {
            cycles += e.path("name").asText().equals("CYCLE_START") ? 1 : 0;
            allreduces += e.path("name").asText().equals("ALLREDUCE") ? 1 : 0;
        }
        assertTrue(allreduces >= 20, "expected the 20 allreduces in the timeline, got " + allreduces);
        assertTrue(cycles >= 20, "expected a cycle mark for each cycle that ran an allreduce, got " + cycles);
    }

    @Test
    void horovodsVariablesAreDefaultsThatKolosOwnAndFlagsOverride(@TempDir Path dir) throws Exception {
        List<String> args = new ArrayList<>(words("run -np 2 --cycle-time-ms 4"));
        args.addAll(worker(dir));
        Job j = kolo(Map.of("HOROVOD_FUSION_THRESHOLD", "1048576", "HOROVOD_CYCLE_TIME", "2",
                "HOROVOD_CACHE_CAPACITY", "9", "KOLO_CACHE_CAPACITY", "7", "HOROVOD_STALL_CHECK_DISABLE", "1"), dir, args);
        assertEquals(0, j.code(), j.all());
        List<String> settings = j.settingsLines();
        assertEquals(2, settings.size(), j.all());
        for (String line : settings) {
            assertTrue(line.contains(" fusion=1048576 cycle=4.0 cache=7 timeline=null markCycles=off stallCheck=off "),
                    line);
        }
    }

    @Test
    void outputFilenameWritesOpenMpisLayoutAndWdirMovesTheRanks(@TempDir Path dir) throws Exception {
        Path logs = dir.resolve("logs");
        Path work = Files.createDirectories(dir.resolve("work"));
        List<String> args = words("run -np 2 --output-filename " + logs + " -wdir " + work + " --timestamp-output");
        args.addAll(worker(dir));
        Job j = kolo(Map.of(), dir, args);
        assertEquals(0, j.code(), j.all());
        for (int r = 0; r < 2; r++) {
            String stdout = Files.readString(logs.resolve("1/rank." + r + "/stdout"));
            assertTrue(stdout.contains("rank " + r + " ok"), stdout);
            assertTrue(Files.exists(logs.resolve("1/rank." + r + "/stderr")));
        }
        for (String line : j.settingsLines()) {
            assertTrue(line.endsWith(" wd=" + work), line);
        }
        // Open MPI's stamp: ctime's layout, then the tag.
        Pattern stamped = Pattern.compile("^[A-Z][a-z]{2} [A-Z][a-z]{2} [ \\d]\\d \\d\\d:\\d\\d:\\d\\d \\d{4}\\[\\d]<stdout>:.*");
        assertTrue(j.out().lines().allMatch(l -> stamped.matcher(l).matches()), j.out());
    }

    @Test
    void displayMapReportBindingsAndVerboseNotes(@TempDir Path dir) throws Exception {
        List<String> args = words("run -np 2 -H localhost:2 --display-map --report-bindings --bind-to core --verbose"
                + " -mca btl ^openib --prefix /opt/openmpi --tag-output");
        args.addAll(worker(dir));
        Job j = kolo(Map.of(), dir, args);
        assertEquals(0, j.code(), j.all());
        assertTrue(j.err().contains("kolo:   rank 1 on localhost: local rank 1 of 2, cross rank 0 of 1"), j.err());
        assertTrue(j.err().contains("kolo: -mca btl ^openib ignored: it tunes Open MPI's own transports"), j.err());
        assertTrue(j.err().contains("kolo: --prefix /opt/openmpi ignored"), j.err());
        assertTrue(j.err().contains("KOLO_BIND_TO=core"), j.err());
        for (int r = 0; r < 2; r++) {
            Pattern bound = Pattern.compile("\\[" + r + "]<stderr>:kolo: rank " + r + " \\(local rank " + r
                    + " of 2 on localhost\\) (is bound to CPU \\d+|is not bound .*)");
            assertTrue(j.err().lines().anyMatch(l -> bound.matcher(l).matches()), j.err());
        }
    }

    /** A bad value in a compatible option, or in a HOROVOD_* variable, is one line naming it; no rank starts. */
    @Test
    void badValuesAreOneLineNamingWhatWasGiven(@TempDir Path dir) throws Exception {
        Path marks = Files.createDirectories(dir.resolve("marks"));
        String touch = "touch " + marks + "/$KOLO_RANK";
        List<List<String>> bad = List.of(
                List.of("--cycle-time-ms", "-1"), List.of("--cache-capacity", "lots"),
                List.of("--fusion-threshold-mb", "big"), List.of("--log-level", "LOUD"),
                List.of("--map-by", "ppr:2:node"), List.of("--bind-to", "numa"),
                List.of("--stall-check-shutdown-time-seconds", "soon"));
        List<String> expected = List.of(
                "kolo: --cycle-time-ms -1: expected a non-negative number of milliseconds (KOLO_CYCLE_TIME)",
                "kolo: --cache-capacity lots: expected a number of response-cache entries from 0 (no cache) to 1048576"
                        + " (KOLO_CACHE_CAPACITY)",
                "kolo: --fusion-threshold-mb big: expected a non-negative number of MiB, 0 disables fusion"
                        + " (KOLO_FUSION_THRESHOLD)",
                "kolo: --log-level LOUD: expected trace, debug, info, warning, error or fatal (KOLO_LOG_LEVEL)",
                "kolo: --map-by ppr:2:node: kolo run places ranks by slot (or core, the same here) or by node; use one"
                        + " of those",
                "kolo: --bind-to numa: use core (one CPU per rank), socket (the CPUs of one processor package) or none",
                "kolo: --stall-check-shutdown-time-seconds soon: expected a non-negative number of seconds (0: never),"
                        + " at most 9223372036854775807 (KOLO_STALL_SHUTDOWN_TIME_SECONDS)");
        for (int i = 0; i < bad.size(); i++) {
            List<String> args = new ArrayList<>(List.of("run", "-np", "2"));
            args.addAll(bad.get(i));
            args.addAll(List.of("--", "sh", "-c", touch));
            LauncherProcessTest.Result r = LauncherProcessTest.kolo(args.toArray(String[]::new));
            assertEquals(2, r.code(), r.err());
            assertEquals(expected.get(i) + "\n", r.err());
        }
        Job env = kolo(Map.of("HOROVOD_CYCLE_TIME", "fast"), dir, List.of("run", "-np", "2", "--", "sh", "-c", touch));
        assertEquals(2, env.code(), env.all());
        assertEquals("kolo: HOROVOD_CYCLE_TIME='fast' is invalid: expected a non-negative number of milliseconds"
                + " (no rank was started)\n", env.err());
        try (var files = Files.list(marks)) {
            assertEquals(List.of(), files.toList(), "a rank started despite a bad value");
        }
    }
}
