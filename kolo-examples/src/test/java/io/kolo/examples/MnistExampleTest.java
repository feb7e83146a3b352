package io.kolo.examples;

import io.kolo.djl.testing.ProcessJob;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Real MNIST (the t10k set from {@code ../shared/data/mnist} next to the checkout: first 8,000 images train,
 * last 2,000 test), two real processes training a CNN together over Kolo.
 */
@Timeout(300)
class MnistExampleTest {

    /** {@code -Dkolo.mnist=DIR}, {@code KOLO_MNIST}, or {@code ../shared/data/mnist} beside the checkout. */
    static Path mnistDir() {
        String configured = System.getProperty("kolo.mnist", System.getenv("KOLO_MNIST"));
        if (configured != null && !configured.isBlank()) {
            return Path.of(configured);
        }
        // Tests run in kolo-examples/: the checkout is its parent, shared/ sits beside the checkout.
        Path module = Path.of("").toAbsolutePath();
        Path checkout = Files.exists(module.resolve("kolo-examples")) ? module : module.getParent();
        return checkout.getParent().resolve("shared/data/mnist");
    }

    @Test
    void twoRanksReachNinetyFivePercentOnTheHeldOutImages(@TempDir Path dir) throws Exception {
        Path data = mnistDir();
        Assumptions.assumeTrue(Files.exists(data.resolve(MnistData.TEST_IMAGES)),
                "skipped: no MNIST t10k files in " + data + " (set -Dkolo.mnist=DIR)");
        List<ProcessJob.Rank> ranks = ProcessJob.run(2, dir, 280, MnistExample.class.getName(),
                "--data", data.toString(), "--model", "cnn", "--epochs", "3", "--batch-size", "32");
        String all = ProcessJob.report(dir, 2);
        assertEquals(0, ranks.get(0).exitCode(), all);
        assertEquals(0, ranks.get(1).exitCode(), all);
        List<String> lines = ranks.get(0).out().lines().toList();
        assertTrue(lines.getFirst().contains("first 8000 images train, last 2000 test"), all);
        assertEquals(3, lines.stream().filter(l -> l.matches("epoch \\d: loss [0-9.]+, test accuracy [0-9.]+% .*")).count(), all);
        Matcher m = Pattern.compile("final test accuracy ([0-9.]+)%").matcher(lines.getLast());
        assertTrue(m.matches(), all);
        double accuracy = Double.parseDouble(m.group(1));
        assertTrue(accuracy >= 95.0, "2-rank MNIST reached only " + accuracy + "%:\n" + all);
        // Rank 1 trains and evaluates too, but only rank 0 reports.
        assertTrue(ranks.get(1).out().isBlank(), all);
    }

    /**
     * The promise that the mnist example shows up in the job view with no code of its own: run as under
     * {@code mpirun} (rank 0 serves the store) with {@code KOLO_REPORT}, rank 0 writes the report, whose JSON holds
     * both ranks' loss from DistributedTrainer and the example's progress.
     */
    @Test
    void theJobViewReportHoldsEachRanksLossAndTheProgress(@TempDir Path dir) throws Exception {
        Path data = mnistDir();
        Assumptions.assumeTrue(Files.exists(data.resolve(MnistData.TEST_IMAGES)),
                "skipped: no MNIST t10k files in " + data + " (set -Dkolo.mnist=DIR)");
        Path report = dir.resolve("job.html");
        List<ProcessJob.Rank> ranks = ProcessJob.run(2, dir, 280,
                java.util.Map.of("KOLO_REPORT", report.toString(), "KOLO_VIEW_INTERVAL_MS", "200"),
                MnistExample.class.getName(), "--data", data.toString(), "--model", "mlp", "--epochs", "1");
        String all = ProcessJob.report(dir, 2);
        assertEquals(0, ranks.get(0).exitCode(), all);
        assertEquals(0, ranks.get(1).exitCode(), all);
        assertTrue(Files.exists(report), "rank 0 wrote no report to " + report + ":\n" + all);
        String html = Files.readString(report);
        Matcher m = Pattern.compile("<script type=\"application/json\" id=\"kolo-job\">(.*?)</script>",
                Pattern.DOTALL).matcher(html);
        assertTrue(m.find(), "no kolo-job JSON in the report");
        com.fasterxml.jackson.databind.JsonNode job = new com.fasterxml.jackson.databind.json.JsonMapper()
                .readTree(m.group(1).replace("<\\/", "</"));
        assertEquals("SUCCEEDED", job.get("state").asText(), job.toString());
        assertEquals(2, job.get("size").asInt());
        boolean[] lossOf = new boolean[2];
        double progress = -1;
        for (com.fasterxml.jackson.databind.JsonNode point : job.get("metrics")) {
            String name = point.get("name").asText();
            if (name.equals("loss")) {
                double loss = point.get("value").asDouble();
                assertTrue(loss > 0 && loss < 10, "loss " + loss);
                lossOf[point.get("rank").asInt()] = true;
            } else if (name.equals("progress") && point.get("rank").asInt() == 0) {
                progress = Math.max(progress, point.get("value").asDouble());
            }
        }
        assertTrue(lossOf[0] && lossOf[1], "the report lacks a rank's loss: " + job + "\n" + all);
        assertEquals(1.0, progress, 1e-9, "the example's progress did not reach 1");
    }

    @Test
    void elasticNeedsADataDirectoryAndCommitEveryAndLogStepsNeedElastic(@TempDir Path dir) throws Exception {
        ProcessJob.Rank r = ProcessJob.run(1, dir, 60, MnistExample.class.getName(), "--elastic").getFirst();
        assertEquals(2, r.exitCode(), ProcessJob.report(dir, 1));
        assertTrue(r.err().startsWith("mnist: --elastic needs --data DIR (usage: mnist "), r.err());
        r = ProcessJob.run(1, dir, 60, MnistExample.class.getName(), "--commit-every", "5").getFirst();
        assertEquals(2, r.exitCode(), ProcessJob.report(dir, 1));
        assertTrue(r.err().startsWith("mnist: --commit-every is for --elastic (usage: mnist "), r.err());
        r = ProcessJob.run(1, dir, 60, MnistExample.class.getName(), "--log-steps").getFirst();
        assertEquals(2, r.exitCode(), ProcessJob.report(dir, 1));
        assertTrue(r.err().startsWith("mnist: --log-steps is for --elastic (usage: mnist "), r.err());
    }

    /** Before, the example trained a whole epoch and then failed with a stack trace at the first save. */
    @Test
    void aCheckpointDirectoryRankZeroCannotWriteFailsBeforeTraining(@TempDir Path dir) throws Exception {
        Path data = mnistDir();
        Assumptions.assumeTrue(Files.exists(data.resolve(MnistData.TEST_IMAGES)),
                "skipped: no MNIST t10k files in " + data + " (set -Dkolo.mnist=DIR)");
        Path file = Files.createFile(dir.resolve("file"));
        ProcessJob.Rank r = ProcessJob.run(1, dir, 120, MnistExample.class.getName(), "--data", data.toString(),
                "--model", "mlp", "--epochs", "1", "--checkpoint", file.resolve("checkpoints").toString()).getFirst();
        assertEquals(2, r.exitCode(), ProcessJob.report(dir, 1));
        assertEquals("mnist: --checkpoint " + file.resolve("checkpoints") + ": rank 0 cannot write there: Not a directory",
                r.err().strip(), r.err());
        assertFalse(r.out().contains("epoch 1"), r.out());
    }

    @Test
    void aMissingDataDirectoryIsOneClearLineOnEveryRank(@TempDir Path dir) throws Exception {
        Path empty = Files.createDirectories(dir.resolve("empty"));
        List<ProcessJob.Rank> ranks = ProcessJob.run(2, dir, 120, MnistExample.class.getName(), "--data", empty.toString());
        for (ProcessJob.Rank r : ranks) {
            assertEquals(2, r.exitCode(), ProcessJob.report(dir, 2));
            assertTrue(r.err().contains("mnist: no MNIST in " + empty + ": it needs at least t10k-images-idx3-ubyte.gz"),
                    r.err());
        }
    }
}
