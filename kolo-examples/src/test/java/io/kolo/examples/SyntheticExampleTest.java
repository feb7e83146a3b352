package io.kolo.examples;

import io.kolo.djl.testing.ProcessJob;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The synthetic benchmark as two real processes, on the small MLP so it takes seconds: every figure it reports. */
@Timeout(300)
class SyntheticExampleTest {

    @Test
    void twoRanksReportThroughputAveragingTimeScalingEfficiencyAndTheCeiling(@TempDir Path dir) throws Exception {
        List<ProcessJob.Rank> ranks = ProcessJob.run(2, dir, 280, SyntheticExample.class.getName(),
                "--model", "mlp", "--batch-size", "16", "--num-warmup-batches", "1", "--num-batches-per-iter", "2",
                "--num-iters", "3", "--baseline", "--ceiling");
        String all = ProcessJob.report(dir, 2);
        assertEquals(0, ranks.get(0).exitCode(), all);
        assertEquals(0, ranks.get(1).exitCode(), all);
        String out = ranks.get(0).out();
        assertTrue(out.contains("batch size 16 per rank, 2 rank(s)"), all);
        assertEquals(3, out.lines().filter(l -> l.matches("Iter #\\d: [0-9.]+ img/sec per rank")).count(), all);
        assertEquals(3, out.lines().filter(l -> l.matches("Iter #\\d: [0-9.]+ img/sec \\(baseline, np=1\\)")).count(), all);
        Matcher total = Pattern.compile("Total img/sec on 2 rank\\(s\\): ([0-9.]+) \\+-[0-9.]+").matcher(out);
        assertTrue(total.find() && Double.parseDouble(total.group(1)) > 0, all);
        assertTrue(out.lines().anyMatch(l -> l.matches("Gradient averaging on rank 0: [0-9.]+ ms per step of [0-9.]+ ms")),
                all);
        assertTrue(out.lines().anyMatch(l -> l.matches("Gradient averaging per step by rank \\(waiting for slower ranks"
                + " included\\): 0: [0-9.]+ ms 1: [0-9.]+ ms")), all);
        Matcher eff = Pattern.compile("scaling efficiency ([0-9.]+)%").matcher(out);
        assertTrue(eff.find(), all);
        assertTrue(Double.parseDouble(eff.group(1)) > 0, all);
        assertEquals(3, out.lines().filter(l -> l.matches("Iter #\\d: [0-9.]+ img/sec \\(ceiling, every rank alone\\)"))
                .count(), all);
        Matcher ceiling = Pattern.compile("Ceiling \\(every rank training alone at once, no averaging\\): ([0-9.]+) img/sec"
                + " per rank; this machine allows ([0-9.]+)% with free communication, Kolo's run reached ([0-9.]+)% of"
                + " that").matcher(out);
        assertTrue(ceiling.find(), all);
        double perRank = Double.parseDouble(ceiling.group(1));
        double allows = Double.parseDouble(ceiling.group(2));
        double reached = Double.parseDouble(ceiling.group(3));
        assertTrue(perRank > 0 && allows > 0 && reached > 0, all);
        // The three figures are one arithmetic: efficiency = allowed x reached.
        assertEquals(Double.parseDouble(eff.group(1)), allows * reached / 100, 0.5, all);
    }

    /** Before, the benchmark ran to its end, printed that it could not write the file, and still exited 0. */
    @Test
    void aJsonFileRankZeroCannotWriteFailsBeforeTheBenchmark(@TempDir Path dir) throws Exception {
        Path file = java.nio.file.Files.createFile(dir.resolve("file"));
        Path json = file.resolve("results.json");
        ProcessJob.Rank r = ProcessJob.run(1, dir, 120, SyntheticExample.class.getName(), "--model", "mlp",
                "--batch-size", "4", "--num-warmup-batches", "1", "--num-batches-per-iter", "1", "--num-iters", "1",
                "--json", json.toString()).getFirst();
        assertEquals(2, r.exitCode(), ProcessJob.report(dir, 1));
        assertEquals("synthetic: --json " + json + ": rank 0 cannot write there: " + file + " is a file, not a directory",
                r.err().strip(), r.err());
        assertTrue(r.out().isBlank(), r.out());
    }

    @Test
    void anUnknownModelIsOneClearLineOnEveryRank(@TempDir Path dir) throws Exception {
        List<ProcessJob.Rank> ranks = ProcessJob.run(2, dir, 120, SyntheticExample.class.getName(), "--model", "vgg99");
        for (ProcessJob.Rank r : ranks) {
            assertEquals(2, r.exitCode(), ProcessJob.report(dir, 2));
            assertTrue(r.err().contains("--model must be mlp, mlp-deep, resnet18 or resnet34, not 'vgg99'"), r.err());
        }
    }
}
