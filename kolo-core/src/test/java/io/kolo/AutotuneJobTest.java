package io.kolo;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** KOLO_AUTOTUNE with ranks as processes over shared memory: settings change under the job, results stay exact. */
class AutotuneJobTest {

    @Test
    void ranksAsProcessesSwitchTogetherAndStayExact(@TempDir Path dir) throws Exception {
        Path log = dir.resolve("autotune.csv");
        List<ProcessRanks.Exit> exits = ProcessRanks.run(3, Main.class, List.of(), Map.of("KOLO_AUTOTUNE", "1",
                "KOLO_AUTOTUNE_LOG", log.toString(), "KOLO_AUTOTUNE_WARMUP_SAMPLES", "1",
                "KOLO_AUTOTUNE_STEPS_PER_SAMPLE", "4", "KOLO_AUTOTUNE_BAYES_OPT_MAX_SAMPLES", "6"), 180);
        for (ProcessRanks.Exit e : exits) {
            assertEquals(0, e.code(), "rank " + e.rank() + " failed:\n" + e.output());
            assertTrue(e.output().contains("exact after 80 steps"), e.output());
        }
        List<String> lines = Files.readAllLines(log);
        assertEquals(6, lines.stream().filter(l -> l.contains(",sample,")).count(), String.join("\n", lines));
        assertTrue(lines.getLast().startsWith("# Kolo autotune chose "), String.join("\n", lines));
        assertTrue(exits.getFirst().output().contains("kolo: autotune chose fusion threshold"), exits.getFirst().output());
    }

    /** One rank: a model of mixed tensor sizes reduced asynchronously each step, every result checked. */
    public static final class Main {
        public static void main(String[] args) {
            try (Communicator comm = Communicator.fromEnvironment()) {
                int[] sizes = {10, 1000, 70_000, 3, 20_000, 300_000, 5};
                int n = comm.size();
                for (int step = 0; step < 80; step++) {
                    List<Handle<Tensor>> hs = new ArrayList<>();
                    List<double[]> data = new ArrayList<>();
                    for (int t = 0; t < sizes.length; t++) {
                        double[] x = new double[sizes[t]];
                        java.util.Arrays.fill(x, comm.rank() + step * t);
                        data.add(x);
                        hs.add(comm.allreduceAsync("w" + t, Tensor.of(x), ReduceOp.SUM));
                    }
                    for (int t = 0; t < sizes.length; t++) {
                        hs.get(t).await();
                        double expected = n * (n - 1) / 2.0 + n * (double) step * t;
                        for (double v : data.get(t)) {
                            if (v != expected) {
                                throw new AssertionError("step " + step + " tensor " + t + ": " + v + " != " + expected);
                            }
                        }
                    }
                }
                System.out.println("exact after 80 steps");
            }
        }
    }
}
