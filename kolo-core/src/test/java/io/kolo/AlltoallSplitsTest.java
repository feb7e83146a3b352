package io.kolo;

import org.junit.jupiter.api.Test;

import java.util.Arrays;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * An alltoall's splits are each rank's own: the negotiation agrees on the op (name, type, a row's shape) and the op
 * itself exchanges how many rows go where. So a repeated alltoall whose splits change at every call (a mixture of
 * experts' routing) still runs from the response cache, and bad splits on one rank, which only that rank knows, still
 * fail the op on every rank with one line naming that rank and what was wrong.
 */
class AlltoallSplitsTest {

    /** Rows rank {@code from} sends rank {@code to} at {@code step}: changes every step, on every rank, sometimes 0. */
    private static long rowsAt(int from, int to, int step) {
        return (from * 7L + to * 3L + step * 5L) % 4;
    }

    @Test
    void aRepeatedAlltoallWhoseSplitsChangeEveryStepOnEveryRankRunsFromTheCache() {
        int n = 3;
        int steps = 20;
        List<EngineStats> stats = Ranks.run(n, comm -> {
            int me = comm.rank();
            for (int step = 0; step < steps; step++) {
                long[] splits = new long[n];
                for (int p = 0; p < n; p++) {
                    splits[p] = rowsAt(me, p, step);
                }
                long total = Arrays.stream(splits).sum();
                // Rows of two ints: (sender, receiver * 1000 + step * 10 + row).
                int[] data = new int[(int) total * 2];
                int k = 0;
                for (int p = 0; p < n; p++) {
                    for (int i = 0; i < splits[p]; i++) {
                        data[k++] = me;
                        data[k++] = p * 1000 + step * 10 + i;
                    }
                }
                AlltoallResult got = comm.alltoallAsync("experts", Tensor.of(data, total, 2), splits).await();
                long[] expected = new long[n];
                for (int p = 0; p < n; p++) {
                    expected[p] = rowsAt(p, me, step);
                }
                assertArrayEquals(expected, got.receivedSplits(), "rank " + me + " step " + step);
                assertArrayEquals(new long[]{Arrays.stream(expected).sum(), 2}, got.tensor().shape());
                int[] values = got.tensor().ints();
                k = 0;
                for (int p = 0; p < n; p++) {
                    for (int i = 0; i < expected[p]; i++) {
                        assertEquals(p, values[k++], "rank " + me + " step " + step + " sender");
                        assertEquals(me * 1000 + step * 10 + i, values[k++], "rank " + me + " step " + step);
                    }
                }
            }
            return comm.stats();
        });
        for (int r = 0; r < n; r++) {
            // The first call goes to the coordinator; the others may when a rank is slow past the cache's grace time.
            assertTrue(stats.get(r).cachedOps() >= steps / 2, "rank " + r + ": the alltoall whose splits change"
                    + " should run from the cache: " + stats.get(r));
        }
    }

    private static void assertEveryRankFailsWithOneLine(List<Ranks.Outcome<Object>> outcomes, List<Integer> ranks,
                                                         String... fragments) {
        String first = null;
        for (int r : ranks) {
            Throwable e = outcomes.get(r).error();
            assertNotNull(e, "rank " + r + " should have failed");
            assertInstanceOf(KoloException.class, e, "rank " + r);
            String m = e.getMessage();
            assertFalse(m.contains("\n"), "rank " + r + ": one line: " + m);
            for (String f : fragments) {
                assertTrue(m.contains(f), "rank " + r + " message lacks '" + f + "': " + m);
            }
            if (first == null) {
                first = m;
            }
            assertEquals(first, m, "every rank tells the same");
        }
    }

    @Test
    void oneRanksBadSplitsFailTheAlltoallOnEveryRankNamingThatRankAndTheNextOneRuns() {
        int n = 4;
        var outcomes = Ranks.<Object>outcomes(n, Map.of(), comm -> {
            int me = comm.rank();
            long[] good = {1, 1, 1, 1};
            // Run once, so that the bad call is answered by the cache (no coordinator sees any splits).
            comm.alltoallAsync("route", Tensor.of(new float[8], 4, 2), good).await();
            long[] splits = me == 2 ? new long[]{2, -1, 2, 1} : good;
            try {
                comm.alltoallAsync("route", Tensor.of(new float[8], 4, 2), splits).await();
            } catch (KoloException e) {
                // The engine and every rank go on: the same alltoall with good splits runs.
                AlltoallResult after = comm.alltoallAsync("route", Tensor.of(new float[8], 4, 2), good).await();
                assertArrayEquals(good, after.receivedSplits());
                throw e;
            }
            return null;
        });
        assertEveryRankFailsWithOneLine(outcomes, List.of(0, 1, 2, 3),
                "alltoall 'route': rank 2 gave a negative split [2, -1, 2, 1]");
    }

    @Test
    void theFirstBadRankIsNamedWhenSeveralGaveBadSplits() {
        var outcomes = Ranks.<Object>outcomes(3, Map.of(), comm -> comm.alltoallAsync("a2a", Tensor.of(new int[3]),
                comm.rank() == 0 ? new long[]{1, 1, 1} : comm.rank() == 1 ? new long[]{1, 1} : new long[]{5, 0, 0})
                .await());
        assertEveryRankFailsWithOneLine(outcomes, List.of(0, 1, 2), "alltoall 'a2a': rank 1 gave 2 splits for 3 ranks");
    }

    @Test
    void badSplitsInAProcessSetNameTheJobRankAndTheSet() {
        // Set {0, 2, 3} of a job of 4: job rank 3 is the set's rank 2, and its splits add up to too few rows.
        var outcomes = Ranks.<Object>outcomes(4, Map.of("KOLO_DYNAMIC_PROCESS_SETS", "1"), comm -> {
            ProcessSet set = comm.addProcessSet(0, 2, 3);
            if (!set.included()) {
                return null;
            }
            long[] splits = comm.rank() == 3 ? new long[]{1, 0, 1} : new long[]{1, 1, 1};
            return comm.on(set).alltoallAsync("moe", Tensor.of(new float[3]), splits).await();
        });
        assertEveryRankFailsWithOneLine(outcomes, List.of(0, 2, 3), "alltoall 'moe' in process set 1: rank 3 gave"
                + " splits [1, 0, 1] summing to 2 for a first dimension of 3");
        assertEquals(null, outcomes.get(1).error());
    }
}
