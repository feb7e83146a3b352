package io.kolo;

import org.junit.jupiter.api.Test;

import java.util.Arrays;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Allgather and alltoall repeated under one name run from the response cache, as Horovod's do: each rank checks its
 * own rows against a cached allgather's answer, so a change on any one rank sends the name back to the coordinator on
 * every rank; an alltoall's answer holds no splits, the op exchanges them itself. Every result stays right.
 */
class CachedGatherTest {

    /** Rank r's rows at a step: r + 1, or {@code changedRows} for rank 1 from step 5 on when it is positive. */
    private static int rows(int rank, int step, int changedRows) {
        return changedRows > 0 && rank == 1 && step >= 5 ? changedRows : rank + 1;
    }

    /** Two columns per row; element i of rank r's block at step s is r * 1000 + s * 10 + i. */
    private static double[] block(int rank, int step, int changedRows) {
        double[] d = new double[2 * rows(rank, step, changedRows)];
        for (int i = 0; i < d.length; i++) {
            d[i] = rank * 1000 + step * 10 + i;
        }
        return d;
    }

    private static double[] gathered(int n, int step, int changedRows) {
        double[] all = new double[0];
        for (int r = 0; r < n; r++) {
            double[] b = block(r, step, changedRows);
            double[] grown = Arrays.copyOf(all, all.length + b.length);
            System.arraycopy(b, 0, grown, all.length, b.length);
            all = grown;
        }
        return all;
    }

    @Test
    void aRepeatedAllgatherWithUnevenRowsRunsFromTheCacheWithTheRightResult() {
        int n = 3;
        int steps = 20;
        List<EngineStats> stats = Ranks.run(n, comm -> {
            for (int step = 0; step < steps; step++) {
                double[] mine = block(comm.rank(), step, 0);
                Tensor got = comm.allgatherAsync("metrics", Tensor.of(mine, mine.length / 2, 2)).await();
                assertArrayEquals(new long[]{1 + 2 + 3, 2}, got.shape(), "step " + step);
                assertArrayEquals(gathered(n, step, 0), got.doubles(), "step " + step);
            }
            return comm.stats();
        });
        for (EngineStats s : stats) {
            // The first step negotiates the name; the rest come from the cache (a slow rank may cost one more round).
            assertTrue(s.cachedOps() >= steps - 3, "the repeated allgather should run from the cache: " + s);
        }
    }

    @Test
    void oneRankChangingItsRowsChangesTheResultOnEveryRank() {
        int n = 3;
        int steps = 12;
        List<EngineStats> stats = Ranks.run(n, comm -> {
            EngineStats before = null;
            for (int step = 0; step < steps; step++) {
                if (step == 7) {
                    before = comm.stats();
                }
                double[] mine = block(comm.rank(), step, 4);
                Tensor got = comm.allgatherAsync("rows", Tensor.of(mine, mine.length / 2, 2)).await();
                long rows = step >= 5 ? 1 + 4 + 3 : 1 + 2 + 3;
                assertArrayEquals(new long[]{rows, 2}, got.shape(), "rank " + comm.rank() + " step " + step);
                assertArrayEquals(gathered(n, step, 4), got.doubles(), "rank " + comm.rank() + " step " + step);
            }
            EngineStats after = comm.stats();
            return new EngineStats(0, after.cachedOps() - before.cachedOps(), 0, 0, 0);
        });
        for (EngineStats s : stats) {
            assertTrue(s.cachedOps() >= 3, "the new rows are cached again after one coordinator round: " + s);
        }
    }

    @Test
    void aRepeatedAlltoallFollowsSplitsThatChangeOnOneRank() {
        int n = 3;
        List<Boolean> ok = Ranks.run(n, comm -> {
            int me = comm.rank();
            for (int step = 0; step < 12; step++) {
                // Rank r sends (r + p) % 3 + 1 rows of one element to rank p; rank 0 sends 5 more to rank 2 from
                // step 6 on.
                long[] splits = new long[n];
                for (int p = 0; p < n; p++) {
                    splits[p] = (me + p) % 3 + 1 + (me == 0 && p == 2 && step >= 6 ? 5 : 0);
                }
                long total = Arrays.stream(splits).sum();
                float[] data = new float[(int) total];
                int k = 0;
                for (int p = 0; p < n; p++) {
                    for (int i = 0; i < splits[p]; i++) {
                        data[k++] = me * 100 + p * 10 + step * 1000 + i;
                    }
                }
                AlltoallResult got = comm.alltoallAsync("shuffle", Tensor.of(data, total), splits).await();
                long[] expectedSplits = new long[n];
                for (int p = 0; p < n; p++) {
                    expectedSplits[p] = (p + me) % 3 + 1 + (p == 0 && me == 2 && step >= 6 ? 5 : 0);
                }
                assertArrayEquals(expectedSplits, got.receivedSplits(), "rank " + me + " step " + step);
                float[] values = got.tensor().floats();
                k = 0;
                for (int p = 0; p < n; p++) {
                    for (int i = 0; i < expectedSplits[p]; i++) {
                        assertEquals(p * 100 + me * 10 + step * 1000 + i, values[k++], 0.0,
                                "rank " + me + " step " + step + " from " + p);
                    }
                }
            }
            assertTrue(comm.stats().cachedOps() >= 6, "the repeated alltoall should run from the cache: "
                    + comm.stats());
            return true;
        });
        assertEquals(List.of(true, true, true), ok);
    }

    @Test
    void aProcessSetChecksItsRanksOwnRows() {
        // Set {1, 2} of a job of 3: set ranks 0 and 1 send 2 and 3 rows; rank 1 (set rank 0) changes to 4 at step 5.
        List<String> out = Ranks.run(3, Map.of("KOLO_DYNAMIC_PROCESS_SETS", "1"), comm -> {
            ProcessSet set = comm.addProcessSet(1, 2);
            StringBuilder sb = new StringBuilder();
            if (set.included()) {
                for (int step = 0; step < 10; step++) {
                    int rows = comm.rank() == 1 && step >= 5 ? 4 : comm.rank() + 1;
                    float[] mine = new float[rows];
                    Arrays.fill(mine, comm.rank() * 10 + step);
                    Tensor got = comm.on(set).allgatherAsync("set.rows", Tensor.of(mine, rows)).await();
                    sb.append(Arrays.toString(got.floats())).append(' ');
                }
            }
            return sb.toString().strip();
        });
        StringBuilder expected = new StringBuilder();
        for (int step = 0; step < 10; step++) {
            float[] all = new float[(step >= 5 ? 4 : 2) + 3];
            Arrays.fill(all, 0, step >= 5 ? 4 : 2, 10 + step);
            Arrays.fill(all, step >= 5 ? 4 : 2, all.length, 20 + step);
            expected.append(Arrays.toString(all)).append(' ');
        }
        assertEquals("", out.get(0));
        assertEquals(expected.toString().strip(), out.get(1));
        assertEquals(expected.toString().strip(), out.get(2));
    }
}
