package io.kolo.djl;

import ai.djl.Model;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Nothing committed is lost: a rank 0 killed (SIGKILL) while it saves a checkpoint leaves one that DJL's
 * {@code model.load} reads, the newest whole one, never a truncated file in its place.
 */
@Timeout(180)
class CheckpointKilledTest {

    @Test
    void aRankKilledWhileSavingLeavesTheNewestWholeCheckpointLoadable(@TempDir Path dir) throws Exception {
        KoloDjl.configureEngine(1);
        for (int round = 0; round < 6; round++) {
            int r = round;
            Path checkpoints = dir.resolve("round" + round);
            Process worker = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                    "--enable-native-access=ALL-UNNAMED", "-cp", System.getProperty("java.class.path"),
                    CheckpointWorker.class.getName(), checkpoints.toString())
                    .redirectError(dir.resolve("worker" + round + ".err").toFile()).start();
            try (BufferedReader out = new BufferedReader(new InputStreamReader(worker.getInputStream()))) {
                String line;
                do {
                    line = out.readLine();
                    assertTrue(line != null, () -> "the worker ended before saving twice: " + read(dir, r));
                } while (!line.equals("saved 2"));
                // Into the middle of a save, at a different point each round.
                Thread.sleep(3L * round);
            } finally {
                worker.destroyForcibly();
                assertTrue(worker.waitFor(30, TimeUnit.SECONDS));
            }
            try (Model model = CheckpointWorker.model()) {
                model.load(checkpoints, "ckpt");
                int epoch = Integer.parseInt(model.getProperty("Epoch"));
                assertTrue(epoch >= 2, "round " + round + " loaded epoch " + epoch);
            }
            List<String> names;
            try (var files = Files.list(checkpoints)) {
                names = files.map(p -> p.getFileName().toString()).filter(n -> n.endsWith(".params")).toList();
            }
            for (String name : names) {
                try (Model model = CheckpointWorker.model()) {
                    model.load(checkpoints, "ckpt", java.util.Map.of("epoch", name.substring(5, 9)));
                    assertEquals(CheckpointWorker.UNITS, model.getBlock().getParameters().get("weight").getArray()
                            .getShape().get(0), name);
                }
            }
        }
    }

    private static String read(Path dir, int round) {
        try {
            return Files.readString(dir.resolve("worker" + round + ".err"));
        } catch (java.io.IOException e) {
            return e.toString();
        }
    }
}
