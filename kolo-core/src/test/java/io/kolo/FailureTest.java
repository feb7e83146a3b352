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

    /** A rank whose own work threw (a Spark task, a thread) leaves with abort: the others name it and the cause. */
    @Test
    void anAbortingRankIsNamedWithItsCauseOnEveryOtherRank() {
        int n = 3;
        var outcomes = Ranks.<Object>outcomes(n, Map.of(), comm -> {
            float[] x = new float[1 << 10];
            comm.allreduceAsync("grad", Tensor.of(x), ReduceOp.SUM).await();
            if (comm.rank() == 1) {
                comm.abort(new IllegalStateException("bad batch 7"));
                return "aborted";
            }
            for (int step = 0; step < 100; step++) {
                comm.allreduceAsync("grad", Tensor.of(x), ReduceOp.SUM).await();
            }
            return "no failure";
        });
        for (int r : new int[]{0, 2}) {
            Throwable e = outcomes.get(r).error();
            assertNotNull(e, "rank " + r + " should fail, got " + outcomes.get(r).value());
            RankFailedException rf = assertInstanceOf(RankFailedException.class, e, "rank " + r);
            assertEquals(1, rf.failedRank(), "rank " + r + ": " + e.getMessage());
            assertTrue(e.getMessage().contains("rank 1 failed: IllegalStateException: bad batch 7"), e.getMessage());
        }
    }

    /**
     * The ranks next to a vanished rank abort, and their other neighbours see those aborts before anyone has
     * recorded the failure; they must still name the vanished rank, not the messenger next to them.
     */
    @Test
    void ranksSeeingAMessengerAbortNameTheRankThatVanished() {
        int n = 6;
        var outcomes = Ranks.<Object>outcomes(n, Map.of(), comm -> {
            float[] x = new float[1 << 12];
            for (int step = 0; step < 3; step++) {
                comm.allreduceAsync("grad", Tensor.of(x), ReduceOp.SUM).await();
            }
            if (comm.rank() == 3) {
                comm.simulateExit();
                return "vanished";
            }
            for (int step = 0; step < 100; step++) {
                comm.allreduceAsync("grad", Tensor.of(x), ReduceOp.SUM).await();
            }
            return "no failure";
        });
        for (int r = 0; r < n; r++) {
            if (r == 3) {
                continue;
            }
            Throwable e = outcomes.get(r).error();
            assertNotNull(e, "rank " + r + " should fail, got " + outcomes.get(r).value());
            RankFailedException rf = assertInstanceOf(RankFailedException.class, e, "rank " + r);
            assertEquals(3, rf.failedRank(), "rank " + r + ": " + e.getMessage());
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
