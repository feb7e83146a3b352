package io.kolo;

import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A rank that dies makes every other rank fail fast, naming it. */
class FailureTest {

    @Test
    void aCrashedRankIsNamedOnEveryOtherRank() {
        int n = 4;
        var outcomes = Ranks.<Object>outcomes(n, Map.of(), comm -> {
            float[] x = new float[1 << 16];
            for (int step = 0; step < 3; step++) {
                comm.allreduceAsync("grad", Tensor.of(x), ReduceOp.SUM).await();
            }
            if (comm.rank() == 2) {
                comm.simulateCrash("rank 2 ran out of memory");
                return "crashed";
            }
            long start = System.nanoTime();
            try {
                for (int step = 0; step < 100; step++) {
                    comm.allreduceAsync("grad", Tensor.of(x), ReduceOp.SUM).await();
                }
                return "no failure";
            } catch (RankFailedException e) {
                if (System.nanoTime() - start > 20_000_000_000L) {
                    return "too slow: " + e.getMessage();
                }
                throw e;
            }
        });
        for (int r = 0; r < n; r++) {
            if (r == 2) {
                continue;
            }
            Throwable e = outcomes.get(r).error();
            assertNotNull(e, "rank " + r + " should fail, got " + outcomes.get(r).value());
            RankFailedException rf = assertInstanceOf(RankFailedException.class, e, "rank " + r);
            assertEquals(2, rf.failedRank(), "rank " + r + ": " + e.getMessage());
            assertTrue(e.getMessage().contains("rank 2"), e.getMessage());
        }
    }

    @Test
    void laterOpsFailImmediatelyWithTheSameCause() {
        var outcomes = Ranks.<Object>outcomes(2, Map.of(), comm -> {
            if (comm.rank() == 1) {
                comm.simulateCrash("gone");
                return null;
            }
            assertThrows(RankFailedException.class,
                    () -> comm.allreduceAsync("a", Tensor.of(new float[4]), ReduceOp.SUM).await());
            RankFailedException later = assertThrows(RankFailedException.class,
                    () -> comm.allreduceAsync("b", Tensor.of(new float[4]), ReduceOp.SUM).await());
            return later.failedRank();
        });
        assertEquals(1, outcomes.get(0).get());
    }
}
