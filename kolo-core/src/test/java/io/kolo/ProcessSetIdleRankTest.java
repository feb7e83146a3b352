package io.kolo;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A process set's named allreduces over TCP while a rank outside the set does something else: waits in a barrier of
 * the whole job, or calls nothing at all. The set's ops must give the right sums and go on at their own pace; each
 * rank prints its time per op for {@code kolo-bench}'s comparison (not asserted: this machine's speed drifts).
 */
class ProcessSetIdleRankTest {
    static final int OPS = 400;

    @Test
    void aSetsOpsRunWhileTheRankOutsideItWaitsInABarrier(@TempDir Path dir) throws Exception {
        check("barrier", dir);
    }

    @Test
    void aSetsOpsRunWhileTheRankOutsideItCallsNothing(@TempDir Path dir) throws Exception {
        check("away", dir);
    }

    private static void check(String mode, Path dir) throws Exception {
        List<ProcessRanks.Exit> exits = ProcessRanks.run(3, Main.class, List.of(mode, dir.resolve("done").toString()),
                Map.of("KOLO_TRANSPORT", "tcp"), 120);
        for (ProcessRanks.Exit e : exits) {
            assertEquals(0, e.code(), "rank " + e.rank() + " failed:\n" + e.output());
            assertTrue(e.output().contains(e.rank() < 2 ? "sums right " + OPS : "outside done"),
                    "rank " + e.rank() + ": " + e.output());
        }
        System.out.println(mode + ": " + exits.get(0).output().lines().filter(l -> l.contains("us/op")).toList());
    }

    /** One rank: ranks 0 and 1 reduce in their set; rank 2 waits in a barrier, or sleeps until they are done. */
    public static final class Main {
        public static void main(String[] args) throws Exception {
            String mode = args[0];
            Path done = Path.of(args[1]);
            ProcessSet pair = ProcessSet.of(0, 1);
            try (Communicator comm = Communicator.fromEnvironment(System.getenv(), pair)) {
                if (comm.rank() == 2) {
                    if (mode.equals("away")) {
                        while (!Files.exists(done)) {
                            Thread.sleep(10);
                        }
                    }
                    comm.barrier();
                    System.out.println("outside done");
                    return;
                }
                float[] x = new float[4];
                int right = 0;
                long start = 0;
                for (int i = -50; i < OPS; i++) {
                    if (i == 0) {
                        start = System.nanoTime();
                    }
                    java.util.Arrays.fill(x, comm.rank() + 1 + i);
                    comm.on(pair).allreduce("metric", Tensor.of(x), ReduceOp.SUM);
                    if (i >= 0 && x[3] == 3 + 2 * i) {
                        right++;
                    }
                }
                long took = System.nanoTime() - start;
                System.out.printf("rank %d: %.1f us/op%n", comm.rank(), took / 1e3 / OPS);
                System.out.println("sums right " + right);
                if (comm.rank() == 0) {
                    Files.writeString(done, "done");
                }
                comm.barrier();
            }
        }
    }
}
