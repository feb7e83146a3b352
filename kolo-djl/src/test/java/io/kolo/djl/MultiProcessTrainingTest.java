package io.kolo.djl;

import io.kolo.djl.testing.ProcessJob;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Separate JVMs, each with its own PyTorch, training together over Kolo's TCP transport. */
@Timeout(180)
class MultiProcessTrainingTest {

    @Test
    void ranksInSeparateProcessesStayBitIdenticalEveryStep(@TempDir Path dir) throws Exception {
        List<ProcessJob.Rank> ranks = ProcessJob.run(2, dir, 150, TrainingWorker.class.getName(), "20");
        String checksum = null;
        for (int r = 0; r < ranks.size(); r++) {
            ProcessJob.Rank rank = ranks.get(r);
            assertEquals(0, rank.exitCode(), ProcessJob.report(dir, 2));
            String line = rank.out().lines().filter(l -> l.contains("trained 20 steps in sync")).findFirst()
                    .orElseThrow(() -> new AssertionError(rank.out() + rank.err()));
            String sum = line.substring(line.lastIndexOf(' ') + 1);
            if (checksum == null) {
                checksum = sum;
            }
            assertEquals(checksum, sum, "rank " + r + " ends with different parameters");
        }
    }

    @Test
    void aRankDyingMidEpochFailsEveryOtherRankWithTheCause(@TempDir Path dir) throws Exception {
        List<ProcessJob.Rank> ranks = ProcessJob.run(3, dir, 150, TrainingWorker.class.getName(), "1000", "1", "5");
        String all = ProcessJob.report(dir, 3);
        assertEquals(3, ranks.get(1).exitCode(), all);
        assertTrue(ranks.get(1).out().contains("rank 1 dies at step 5"), all);
        for (int r : new int[]{0, 2}) {
            ProcessJob.Rank rank = ranks.get(r);
            assertEquals(1, rank.exitCode(), "rank " + r + " must fail, not finish or hang:\n" + all);
            String failure = rank.out().lines().filter(l -> l.startsWith("rank " + r + " failed: ")).findFirst()
                    .orElseThrow(() -> new AssertionError(all));
            assertTrue(failure.contains("RankFailedException") && failure.contains("rank 1"), failure);
        }
    }
}
