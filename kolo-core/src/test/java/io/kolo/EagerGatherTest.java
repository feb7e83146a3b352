package io.kolo;

import org.junit.jupiter.api.Test;

import java.util.Arrays;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A small broadcast or allgather repeated under one name rides with the cycle's vote, as a small allreduce does: every
 * rank ORs a payload of zeros holding its own bytes in their place. The results must be exact whatever the bytes (sign
 * bits, NaNs, sizes that are not whole words), follow a change of root or rows at once, and an output that does not fit
 * fails its rank only.
 */
class EagerGatherTest {
    private static final int STEPS = 60;

    /** Rank r's block at a step: r + 1 rows of three bytes, with bytes of every bit pattern in turn. */
    private static byte[] bytes(int rank, int step) {
        byte[] b = new byte[3 * (rank + 1)];
        for (int i = 0; i < b.length; i++) {
            b[i] = (byte) (rank * 71 + step * 13 + i * 29 - 128);
        }
        return b;
    }

    @Test
    void aRepeatedSmallAllgatherRidesWithTheVoteAndEveryByteArrives() {
        int n = 3;
        List<EngineStats> stats = Ranks.run(n, comm -> {
            for (int step = 0; step < STEPS; step++) {
                byte[] mine = bytes(comm.rank(), step);
                Tensor got = comm.allgatherAsync("rows", Tensor.of(mine, mine.length / 3, 3)).await();
                byte[] expected = new byte[0];
                for (int r = 0; r < n; r++) {
                    byte[] b = bytes(r, step);
                    expected = Arrays.copyOf(expected, expected.length + b.length);
                    System.arraycopy(b, 0, expected, expected.length - b.length, b.length);
                }
                assertArrayEquals(new long[]{1 + 2 + 3, 3}, got.shape(), "step " + step);
                assertArrayEquals(expected, got.bytes(), "rank " + comm.rank() + " step " + step);
            }
            return comm.stats();
        });
        for (EngineStats s : stats) {
            // The first steps negotiate the name and find it repeated; a slow rank may cost a cycle or two more.
            assertTrue(s.eagerOps() > STEPS / 2, "the repeated allgather should ride with the vote: " + s);
        }
    }

    @Test
    void aRepeatedSmallBroadcastFollowsItsRootAndKeepsNaNsAndSigns() {
        int n = 3;
        List<EngineStats> stats = Ranks.run(n, comm -> {
            for (int step = 0; step < STEPS; step++) {
                int root = step < STEPS / 2 ? 1 : 2;
                double[] v = new double[5];
                if (comm.rank() == root) {
                    v = values(root, step);
                } else {
                    Arrays.fill(v, -7.5);
                }
                comm.broadcastAsync("weights", Tensor.of(v, v.length), root).await();
                assertArrayEquals(values(root, step), v, "rank " + comm.rank() + " step " + step);
            }
            return comm.stats();
        });
        for (EngineStats s : stats) {
            assertTrue(s.eagerOps() > STEPS / 2, "the repeated broadcast should ride with the vote: " + s);
        }
    }

    private static double[] values(int root, int step) {
        return new double[]{-0.0, Double.longBitsToDouble(0x7ff8_0000_0000_0000L | step), -step - root,
                Double.MIN_VALUE, step * 1e300};
    }

    @Test
    void aBroadcastOfBytesThatAreNotWholeWordsArrivesExactly() {
        List<EngineStats> stats = Ranks.run(2, comm -> {
            for (int step = 0; step < STEPS; step++) {
                byte[] b = new byte[13];
                if (comm.rank() == 0) {
                    Arrays.fill(b, (byte) (step - 100));
                }
                comm.broadcastAsync("flags", Tensor.of(b, b.length), 0).await();
                byte[] expected = new byte[13];
                Arrays.fill(expected, (byte) (step - 100));
                assertArrayEquals(expected, b, "rank " + comm.rank() + " step " + step);
            }
            return comm.stats();
        });
        for (EngineStats s : stats) {
            assertTrue(s.eagerOps() > STEPS / 2, s.toString());
        }
    }

    @Test
    void anOutputThatDoesNotFitFailsThatRankOnlyAndTheNameGoesOn() {
        int n = 3;
        List<Ranks.Outcome<float[]>> outcomes = Ranks.outcomes(n, Map.of(), comm -> {
            float[] out = new float[n];
            for (int step = 0; step < STEPS; step++) {
                // At step 40, once the name rides with the vote, rank 1 passes room for one element too few.
                float[] into = comm.rank() == 1 && step == 40 ? new float[n - 1] : out;
                KoloException failure = null;
                try {
                    comm.allgatherIntoAsync("one", Tensor.of(new float[]{comm.rank() + step}, 1),
                            Tensor.of(into, into.length)).await();
                } catch (KoloException e) {
                    failure = e;
                }
                boolean shouldFail = comm.rank() == 1 && step == 40;
                if (shouldFail != (failure != null)) {
                    throw new AssertionError("rank " + comm.rank() + " step " + step + ": failure " + failure);
                }
                if (failure == null) {
                    assertArrayEquals(new float[]{step, 1 + step, 2 + step}, into, "rank " + comm.rank());
                } else {
                    assertTrue(failure.getMessage().contains("rank 1"), failure.getMessage());
                }
            }
            assertTrue(comm.stats().eagerOps() > STEPS / 2, comm.stats().toString());
            return out;
        });
        for (int r = 0; r < n; r++) {
            assertNull(outcomes.get(r).error(), "rank " + r);
            assertArrayEquals(new float[]{STEPS - 1, STEPS, STEPS + 1}, outcomes.get(r).value(), "rank " + r);
        }
    }

    @Test
    void aGatherLargerThanTheEagerLimitGoesTheUsualWay() {
        List<Long> eager = Ranks.run(2, Map.of("KOLO_EAGER_ALLREDUCE_BYTES", "64"), comm -> {
            for (int step = 0; step < 30; step++) {
                // 2 ranks x 5 longs: 80 bytes, over the limit of 64.
                long[] mine = new long[5];
                Arrays.fill(mine, comm.rank() * 100L + step);
                long[] got = comm.allgatherAsync("big", Tensor.of(mine, 5)).await().longs();
                assertEquals(step, got[0]);
                assertEquals(100L + step, got[9]);
            }
            return comm.stats().eagerOps();
        });
        assertEquals(List.of(0L, 0L), eager);
    }

    @Test
    void aBlockingNamedBroadcastRunsOnTheCallersThreadAndFollowsItsRoot() {
        int n = 3;
        List<EngineStats> stats = Ranks.run(n, comm -> {
            for (int step = 0; step < STEPS; step++) {
                int root = step < STEPS / 2 ? 0 : 2;
                double[] v = comm.rank() == root ? values(root, step) : new double[5];
                Tensor t = Tensor.of(v, v.length);
                assertTrue(comm.broadcast("weights", t, root) == t, "in place");
                assertArrayEquals(values(root, step), v, "rank " + comm.rank() + " step " + step);
            }
            return comm.stats();
        });
        for (EngineStats s : stats) {
            assertTrue(s.eagerOps() > STEPS / 2, s.toString());
        }
    }

    @Test
    void aBlockingNamedAllgatherIntoAnOutputThatDoesNotFitFailsThatRankOnly() {
        int n = 3;
        List<Ranks.Outcome<float[]>> outcomes = Ranks.outcomes(n, Map.of(), comm -> {
            float[] out = new float[2 * n];
            for (int step = 0; step < STEPS; step++) {
                // Rank 2 passes room for one row too few at step 40, and an output of another type at step 45.
                Tensor into = Tensor.of(out, n, 2);
                if (comm.rank() == 2 && step == 40) {
                    into = Tensor.of(new float[2 * n - 2], n - 1, 2);
                } else if (comm.rank() == 2 && step == 45) {
                    into = Tensor.of(new int[2 * n], n, 2);
                }
                float[] mine = {comm.rank() + step, -comm.rank() - step};
                KoloException failure = null;
                try {
                    comm.allgatherInto("pair", Tensor.of(mine, 1, 2), into);
                } catch (KoloException e) {
                    failure = e;
                }
                boolean shouldFail = comm.rank() == 2 && (step == 40 || step == 45);
                if (shouldFail != (failure != null)) {
                    throw new AssertionError("rank " + comm.rank() + " step " + step + ": failure " + failure);
                }
                if (failure == null) {
                    for (int r = 0; r < n; r++) {
                        assertEquals(r + step, out[2 * r], "rank " + comm.rank() + " step " + step);
                        assertEquals(-r - step, out[2 * r + 1], "rank " + comm.rank() + " step " + step);
                    }
                }
            }
            assertTrue(comm.stats().eagerOps() > STEPS / 2, comm.stats().toString());
            return out;
        });
        for (int r = 0; r < n; r++) {
            assertNull(outcomes.get(r).error(), "rank " + r);
        }
    }

    @Test
    void aBlockingNamedBroadcastInAProcessSetTakesTheRootsJobRank() {
        List<String> out = Ranks.run(3, Map.of("KOLO_DYNAMIC_PROCESS_SETS", "1"), comm -> {
            ProcessSet set = comm.addProcessSet(1, 2);
            StringBuilder sb = new StringBuilder();
            if (set.included()) {
                for (int step = 0; step < 30; step++) {
                    long[] v = {comm.rank() == 2 ? step * 3L : -1};
                    comm.on(set).broadcast("set.b", Tensor.of(v), 2);
                    sb.append(v[0]).append(' ');
                }
            }
            return sb.toString().strip();
        });
        StringBuilder expected = new StringBuilder();
        for (int step = 0; step < 30; step++) {
            expected.append(step * 3L).append(' ');
        }
        assertEquals("", out.get(0));
        assertEquals(expected.toString().strip(), out.get(1));
        assertEquals(expected.toString().strip(), out.get(2));
    }
}
