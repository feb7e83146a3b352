package io.kolo.examples;

import io.kolo.djl.testing.ProcessJob;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.json.JsonMapper;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code synthetic --compare}: Kolo and PyTorch DDP (the system Python's torch, gloo) training the small deep MLP in
 * one two-process job, taking turns; and the run without torch, which must still give Kolo's figures.
 */
@Timeout(300)
class SyntheticCompareTest {
    /** A table row: np=1 img/sec, total img/sec (with or without its +- range), scaling efficiency. */
    private static Pattern row(String who) {
        return Pattern.compile("\\| " + who + " \\| ([0-9.]+) \\| ([0-9.]+)(?: \\+-[0-9.]+)? \\| ([0-9.]+)% \\|");
    }

    @Test
    void koloAndDdpRowsSideBySideWithTheCeilingAndTheSameArchitecture(@TempDir Path dir) throws Exception {
        Path python = DdpPeer.python();
        String missing = DdpPeer.probe(python);
        if (missing != null) {
            System.out.println("SyntheticCompareTest: skipped, " + missing);
        }
        Assumptions.assumeTrue(missing == null, missing);
        Path json = dir.resolve("results.json");
        List<ProcessJob.Rank> ranks = ProcessJob.run(2, dir, 280, SyntheticExample.class.getName(),
                "--model", "mlp-deep", "--batch-size", "16", "--num-warmup-batches", "1", "--num-batches-per-iter", "2",
                "--num-iters", "2", "--compare", "--json", json.toString());
        String all = ProcessJob.report(dir, 2);
        assertEquals(0, ranks.get(0).exitCode(), all);
        assertEquals(0, ranks.get(1).exitCode(), all);
        String out = ranks.get(0).out();
        // Turns alternate: each Kolo iteration line is followed by DDP's for the same iteration.
        assertEquals(2, out.lines().filter(l -> l.matches("Iter #\\d: [0-9.]+ img/sec \\(PyTorch DDP, np=1\\),"
                + " [0-9.]+ img/sec total \\(PyTorch DDP, np=2\\)")).count(), all);
        for (String who : new String[]{"Kolo\\+DJL", "PyTorch DDP \\(gloo\\)",
                "ceiling \\(Kolo\\+DJL's ranks alone at once, no averaging\\)"}) {
            Matcher row = row(who).matcher(out);
            assertTrue(row.find(), who + " row missing:\n" + all);
            for (int g = 1; g <= 3; g++) {
                assertTrue(Double.parseDouble(row.group(g)) > 0, who + " figure " + g + " not positive:\n" + all);
            }
        }
        // The two frameworks train the same network: counts printed for both, shapes compared tensor by tensor.
        Matcher params = Pattern.compile("Parameters: Kolo\\+DJL ([0-9,]+), PyTorch ([0-9,]+) \\(torch [^)]+\\): 66"
                + " trainable tensors, the same shapes in the same order").matcher(out);
        assertTrue(params.find(), all);
        assertEquals(params.group(1), params.group(2), all);
        assertEquals(2_558_952, Long.parseLong(params.group(1).replace(",", "")), all);
        Matcher paired = Pattern.compile("Median of the per-iteration scaling efficiencies \\(each np=2 run against the"
                + " np=1 run of the same iteration\\): Kolo\\+DJL ([0-9.]+)%, PyTorch DDP ([0-9.]+)%").matcher(out);
        assertTrue(paired.find() && Double.parseDouble(paired.group(1)) > 0 && Double.parseDouble(paired.group(2)) > 0,
                all);
        assertTrue(out.contains("Kolo's scaling efficiency"), all);
        JsonNode written = new JsonMapper().readTree(json.toFile());
        assertTrue(written.path("ddp").path("torch").isTextual()
                && written.path("ddp").path("same_architecture").asBoolean(), written.toPrettyString());
        // DDP ran every turn: it neither failed to start nor stopped on the way.
        assertTrue(!all.contains("PyTorch DDP skipped") && !all.contains("PyTorch DDP stopped"), all);
    }

    @Test
    void withoutTorchDdpIsSkippedInOneLineAndKoloStillReports(@TempDir Path dir) throws Exception {
        Path nowhere = dir.resolve("no-python3");
        List<ProcessJob.Rank> ranks = ProcessJob.run(1, dir, 200, Map.of("KOLO_BENCH_PYTHON", nowhere.toString()),
                SyntheticExample.class.getName(), "--model", "mlp-deep", "--batch-size", "8",
                "--num-warmup-batches", "1", "--num-batches-per-iter", "1", "--num-iters", "1", "--compare");
        String all = ProcessJob.report(dir, 1);
        assertEquals(0, ranks.getFirst().exitCode(), all);
        String message = "synthetic: PyTorch DDP skipped: " + nowhere + " not found; install python3-torch or set"
                + " KOLO_BENCH_PYTHON";
        assertEquals(1, ranks.getFirst().err().lines().filter(message::equals).count(), all);
        String out = ranks.getFirst().out();
        assertTrue(row("Kolo\\+DJL").matcher(out).find(), all);
        assertTrue(out.contains("No PyTorch DDP row: " + nowhere + " not found"), all);
        assertTrue(!out.contains("| PyTorch DDP (gloo) |"), all);
    }
}
