package io.kolo;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The engine's agreement: order, fusion, cache, groups, join. */
class NegotiationTest {

    @Test
    void ranksSubmittingNamesInDifferentOrdersAllGetCorrectResults() {
        int n = 4;
        int tensors = 40;
        List<float[][]> results = Ranks.run(n, comm -> {
            List<Integer> order = new ArrayList<>();
            for (int i = 0; i < tensors; i++) {
                order.add(i);
            }
            Collections.shuffle(order, new Random(comm.rank() * 31L + 7));
            float[][] data = new float[tensors][];
            List<Handle<Tensor>> handles = new ArrayList<>();
            for (int i : order) {
                data[i] = new float[i + 1];
                java.util.Arrays.fill(data[i], comm.rank() + i);
                handles.add(comm.allreduceAsync("grad." + i, Tensor.of(data[i]), ReduceOp.SUM));
            }
            for (Handle<Tensor> h : handles) {
                h.await();
            }
            return data;
        });
        for (float[][] r : results) {
            for (int i = 0; i < tensors; i++) {
                for (float v : r[i]) {
                    assertEquals(n * i + n * (n - 1) / 2.0, v, 0.0);
                }
            }
        }
    }

    @Test
    void threadsRacingOnOneRankStillAgree() {
        int n = 3;
        List<Boolean> ok = Ranks.run(n, comm -> {
            List<Thread> threads = new ArrayList<>();
            List<Throwable> errors = Collections.synchronizedList(new ArrayList<>());
            for (int t = 0; t < 4; t++) {
                int id = t;
                threads.add(Thread.ofPlatform().start(() -> {
                    try {
                        for (int step = 0; step < 10; step++) {
                            long[] x = {id, step, comm.rank()};
                            comm.allreduceAsync("thread" + id + ".step" + step, Tensor.of(x), ReduceOp.SUM).await();
                            if (x[0] != (long) id * n || x[1] != (long) step * n || x[2] != n * (n - 1) / 2) {
                                throw new AssertionError("wrong result " + java.util.Arrays.toString(x));
                            }
                        }
                    } catch (Throwable e) {
                        errors.add(e);
                    }
                }));
            }
            for (Thread t : threads) {
                t.join();
            }
            if (!errors.isEmpty()) {
                throw new AssertionError(errors.getFirst());
            }
            return true;
        });
        assertEquals(List.of(true, true, true), ok);
    }

    @Test
    void smallTensorsReadyTogetherAreFused() {
        List<EngineStats> stats = Ranks.run(3, Map.of("KOLO_CYCLE_TIME", "20"), comm -> {
            List<Handle<Tensor>> handles = new ArrayList<>();
            for (int i = 0; i < 50; i++) {
                handles.add(comm.allreduceAsync("small." + i, Tensor.of(new float[]{comm.rank(), i}), ReduceOp.SUM));
            }
            for (Handle<Tensor> h : handles) {
                float[] x = h.await().floats();
                if (x[0] != 3) {
                    throw new AssertionError("wrong sum " + x[0]);
                }
            }
            return comm.stats();
        });
        for (EngineStats s : stats) {
            assertTrue(s.fusedBuffers() > 0, "expected fused buffers, got " + s);
            assertTrue(s.fusedBuffers() < 50, "50 tiny tensors in one cycle should need few buffers: " + s);
        }
    }

    @Test
    void zeroFusionThresholdDisablesFusion() {
        List<EngineStats> stats = Ranks.run(2, Map.of("KOLO_CYCLE_TIME", "20", "KOLO_FUSION_THRESHOLD", "0"), comm -> {
            List<Handle<Tensor>> handles = new ArrayList<>();
            for (int i = 0; i < 20; i++) {
                handles.add(comm.allreduceAsync("small." + i, Tensor.of(new float[]{1}), ReduceOp.SUM));
            }
            for (Handle<Tensor> h : handles) {
                h.await();
            }
            return comm.stats();
        });
        assertEquals(0, stats.get(0).fusedBuffers());
    }

    @Test
    void repeatedStepsHitTheResponseCacheWithoutCoordinatorRounds() {
        int steps = 30;
        List<EngineStats> stats = Ranks.run(3, comm -> {
            float[] w = new float[100];
            float[] b = new float[10];
            for (int step = 0; step < steps; step++) {
                java.util.Arrays.fill(w, 1);
                java.util.Arrays.fill(b, 2);
                Handle<Tensor> hw = comm.allreduceAsync("w", Tensor.of(w), ReduceOp.SUM);
                Handle<Tensor> hb = comm.allreduceAsync("b", Tensor.of(b), ReduceOp.SUM);
                hw.await();
                hb.await();
                if (w[0] != 3 || b[9] != 6) {
                    throw new AssertionError("wrong results at step " + step);
                }
            }
            return comm.stats();
        });
        for (EngineStats s : stats) {
            assertTrue(s.cachedOps() >= steps, "most steps should run from the cache: " + s);
        }
    }

    @Test
    void namesSpanningSeveralCacheWordsWithEvictionsStayCorrectAndHitTheCache() {
        // 150 names through a 100-entry cache evict on every step; then 70 names (two 64-bit words of the
        // negotiation bit vector) fit and repeat from the cache. Orders differ per rank and per step.
        List<EngineStats> stats = Ranks.run(3, Map.of("KOLO_CACHE_CAPACITY", "100"), comm -> {
            Random random = new Random(comm.rank() * 17L + 3);
            long cachedBefore = 0;
            for (int names : new int[]{150, 70}) {
                for (int step = 0; step < 4; step++) {
                    List<Integer> order = new ArrayList<>();
                    for (int i = 0; i < names; i++) {
                        order.add(i);
                    }
                    Collections.shuffle(order, random);
                    long[][] data = new long[names][];
                    List<Handle<Tensor>> handles = new ArrayList<>();
                    for (int i : order) {
                        data[i] = new long[]{i, step, comm.rank()};
                        handles.add(comm.allreduceAsync("n" + i, Tensor.of(data[i]), ReduceOp.SUM));
                    }
                    for (Handle<Tensor> h : handles) {
                        h.await();
                    }
                    for (int i = 0; i < names; i++) {
                        if (data[i][0] != 3L * i || data[i][1] != 3L * step || data[i][2] != 3) {
                            throw new AssertionError(names + " names, step " + step + ": n" + i + " = "
                                    + java.util.Arrays.toString(data[i]));
                        }
                    }
                }
                if (names == 150) {
                    cachedBefore = comm.stats().cachedOps();
                }
            }
            return new EngineStats(0, comm.stats().cachedOps() - cachedBefore, 0, 0, 0);
        });
        for (EngineStats s : stats) {
            assertTrue(s.cachedOps() > 0, "the 70 repeating names should run from the cache: " + s);
        }
    }

    @Test
    void zeroCacheCapacityAlwaysAsksTheCoordinator() {
        List<EngineStats> stats = Ranks.run(2, Map.of("KOLO_CACHE_CAPACITY", "0"), comm -> {
            for (int step = 0; step < 10; step++) {
                comm.allreduceAsync("w", Tensor.of(new float[4]), ReduceOp.SUM).await();
            }
            return comm.stats();
        });
        assertEquals(0, stats.get(0).cachedOps());
        assertTrue(stats.get(0).coordinatorRounds() >= 10);
    }

    @Test
    void changedShapeUnderACachedNameIsRenegotiated() {
        List<float[]> results = Ranks.run(2, comm -> {
            for (int step = 0; step < 5; step++) {
                comm.allreduceAsync("w", Tensor.of(new float[]{1, 1}), ReduceOp.SUM).await();
            }
            float[] bigger = {1, 2, 3};
            comm.allreduceAsync("w", Tensor.of(bigger), ReduceOp.SUM).await();
            return bigger;
        });
        for (float[] r : results) {
            assertEquals(List.of(2f, 4f, 6f), List.of(r[0], r[1], r[2]));
        }
    }

    @Test
    void groupedAllreduceCompletesTogether() {
        List<List<Tensor>> results = Ranks.run(3, comm -> comm.groupedAllreduce(
                List.of(Tensor.of(new float[]{comm.rank()}), Tensor.of(new double[]{1, 2}), Tensor.of(new float[]{5})),
                ReduceOp.SUM));
        for (List<Tensor> r : results) {
            assertEquals(3.0f, r.get(0).floats()[0]);
            assertEquals(6.0, r.get(1).doubles()[1]);
            assertEquals(15.0f, r.get(2).floats()[0]);
        }
    }

    @Test
    void joinedRanksContributeZerosAndJoinReturnsTheLastRank() {
        int n = 3;
        List<Object> results = Ranks.run(n, comm -> {
            // rank r has r + 1 batches; ranks that run out of data join
            int batches = comm.rank() + 1;
            float sum = 0;
            for (int b = 0; b < batches; b++) {
                float[] x = {1};
                comm.allreduceAsync("batch." + b, Tensor.of(x), ReduceOp.SUM).await();
                sum += x[0];
            }
            int last = comm.join();
            return List.of(sum, last);
        });
        // batch 0: 3 ranks, batch 1: ranks 1,2, batch 2: rank 2 only
        assertEquals(List.of(3f, 2), results.get(0));
        assertEquals(List.of(5f, 2), results.get(1));
        assertEquals(List.of(6f, 2), results.get(2));
    }

    @Test
    void aSmallAllreduceRepeatedUnderOneNameTravelsWithTheNegotiation() {
        int steps = 40;
        List<EngineStats> stats = Ranks.run(3, comm -> {
            for (int step = 0; step < steps; step++) {
                double[] loss = {comm.rank() + step, 1};
                // Prescale and postscale cancel; AVERAGE over 3 ranks: (3 step + 3) / 3, exactly.
                comm.allreduceAsync("loss", Tensor.of(loss), ReduceOp.AVERAGE, 2.0, 0.5).await();
                if (loss[0] != step + 1.0 || loss[1] != 1.0) {
                    throw new AssertionError("step " + step + ": " + java.util.Arrays.toString(loss));
                }
            }
            return comm.stats();
        });
        for (EngineStats s : stats) {
            assertTrue(s.eagerOps() > 0, "a repeated small allreduce should complete with its negotiation: " + s);
            assertTrue(s.eagerOps() <= s.cachedOps(), "eager ops are cached ops: " + s);
        }
    }

    @Test
    void eagerAllreduceIsOffAtZeroBytes() {
        List<EngineStats> stats = Ranks.run(2, Map.of("KOLO_EAGER_ALLREDUCE_BYTES", "0"), comm -> {
            for (int step = 0; step < 20; step++) {
                int[] x = {comm.rank() + 1};
                comm.allreduceAsync("x", Tensor.of(x), ReduceOp.SUM).await();
                if (x[0] != 3) {
                    throw new AssertionError("step " + step + ": " + x[0]);
                }
            }
            return comm.stats();
        });
        for (EngineStats s : stats) {
            assertEquals(0, s.eagerOps(), s.toString());
            assertTrue(s.cachedOps() > 0, s.toString());
        }
    }

    @Test
    void eagerPayloadsOfOpsNotReadyEverywhereAreDroppedNotMixedUp() {
        // Ranks submit two small names in opposite orders, some of them late, so a cycle often finds the eager op
        // ready on some ranks only: its payload must then be ignored and the op run later, each op with
        // its own data.
        int n = 4;
        List<Boolean> ok = Ranks.run(n, comm -> {
            for (int step = 0; step < 60; step++) {
                long[] a = {comm.rank(), step};
                long[] b = {100L * comm.rank(), -step};
                boolean even = comm.rank() % 2 == 0;
                Handle<Tensor> first = even ? comm.allreduceAsync("a", Tensor.of(a), ReduceOp.SUM)
                        : comm.allreduceAsync("b", Tensor.of(b), ReduceOp.MAX);
                if (step % 3 == 0 && !even) {
                    Thread.sleep(1);
                }
                Handle<Tensor> second = even ? comm.allreduceAsync("b", Tensor.of(b), ReduceOp.MAX)
                        : comm.allreduceAsync("a", Tensor.of(a), ReduceOp.SUM);
                second.await();
                first.await();
                if (a[0] != n * (n - 1) / 2 || a[1] != (long) n * step || b[0] != 100L * (n - 1) || b[1] != -step) {
                    throw new AssertionError("step " + step + " rank " + comm.rank() + ": a=" + java.util.Arrays.toString(a)
                            + " b=" + java.util.Arrays.toString(b));
                }
            }
            return true;
        });
        assertEquals(List.of(true, true, true, true), ok);
    }

    @Test
    void eagerAndUsualPathsGiveBitIdenticalFloatResults() {
        int n = 3;
        List<List<float[]>> byMode = new ArrayList<>();
        for (String eager : new String[]{"0", "8192"}) {
            byMode.add(Ranks.run(n, Map.of("KOLO_EAGER_ALLREDUCE_BYTES", eager), comm -> {
                Random random = new Random(comm.rank() * 101L + 5);
                float[] last = null;
                for (int step = 0; step < 10; step++) {
                    float[] x = new float[1000];
                    for (int i = 0; i < x.length; i++) {
                        x[i] = (float) random.nextGaussian() * (i + 1);
                    }
                    comm.allreduceAsync("g", Tensor.of(x), ReduceOp.AVERAGE).await();
                    last = x;
                }
                return last;
            }));
        }
        for (int r = 0; r < n; r++) {
            org.junit.jupiter.api.Assertions.assertArrayEquals(byMode.get(0).get(r), byMode.get(1).get(r),
                    "rank " + r + ": eager on and off must give the same bits");
            org.junit.jupiter.api.Assertions.assertArrayEquals(byMode.get(1).get(0), byMode.get(1).get(r));
        }
    }

    /** Elements of a tensor the engine reduces where it lies inside a fused response (1 MiB and up), plus some. */
    private static final int LARGE = (1 << 18) + 3;

    /** Tensor i of the mixed set on rank r: small, large (heap), small, large (native), small. */
    private static Tensor mixed(int i, int rank, java.lang.foreign.Arena arena) {
        int n = i % 2 == 0 ? 5 + i : LARGE + i;
        java.lang.foreign.MemorySegment seg = i == 3 ? arena.allocate(4L * n, 64)
                : java.lang.foreign.MemorySegment.ofArray(new float[n]);
        for (int j = 0; j < n; j++) {
            seg.setAtIndex(java.lang.foreign.ValueLayout.JAVA_FLOAT, j, (rank + 1) * (i + 1) * (j % 7 + 1));
        }
        return Tensor.of(seg, DataType.FLOAT32, n);
    }

    @Test
    void largeTensorsOfAFusedResponseAreReducedWhereTheyLieAndSmallOnesThroughTheBuffer() {
        int n = 3;
        List<EngineStats> stats = Ranks.run(n, Map.of("KOLO_CYCLE_TIME", "20"), comm -> {
            try (java.lang.foreign.Arena arena = java.lang.foreign.Arena.ofShared()) {
                for (int step = 0; step < 3; step++) {
                    List<Tensor> tensors = new ArrayList<>();
                    List<Handle<Tensor>> handles = new ArrayList<>();
                    for (int i = 0; i < 5; i++) {
                        tensors.add(mixed(i, comm.rank(), arena));
                        handles.add(comm.allreduceAsync("mixed." + i, tensors.get(i), ReduceOp.AVERAGE, 2.0, 0.5));
                    }
                    for (int i = 0; i < 5; i++) {
                        handles.get(i).await();
                        java.lang.foreign.MemorySegment seg = tensors.get(i).segment();
                        for (long j = 0; j < tensors.get(i).elements(); j++) {
                            // sum over ranks of (r + 1) (i + 1) (j % 7 + 1) = 6 (i + 1) (j % 7 + 1); x2 /3 x0.5
                            float expected = 2f * (i + 1) * (j % 7 + 1);
                            float actual = seg.getAtIndex(java.lang.foreign.ValueLayout.JAVA_FLOAT, j);
                            if (Math.abs(actual - expected) > 1e-5f * expected) {
                                throw new AssertionError("step " + step + ", tensor " + i + ", element " + j
                                        + " on rank " + comm.rank() + ": " + actual + ", expected " + expected);
                            }
                        }
                    }
                }
            }
            return comm.stats();
        });
        for (EngineStats s : stats) {
            assertTrue(s.fusedBuffers() > 0, "the five tensors should have met in fused responses: " + s);
        }
    }

    @Test
    void aJoinedRankContributesZerosToTheLargeTensorsOfAFusedResponseToo() {
        List<float[]> sums = Ranks.run(3, Map.of("KOLO_CYCLE_TIME", "20"), comm -> {
            if (comm.rank() == 2) {
                comm.join();
                return new float[0];
            }
            try (java.lang.foreign.Arena arena = java.lang.foreign.Arena.ofShared()) {
                List<Tensor> tensors = new ArrayList<>();
                List<Handle<Tensor>> handles = new ArrayList<>();
                for (int i = 0; i < 5; i++) {
                    tensors.add(mixed(i, comm.rank(), arena));
                    handles.add(comm.allreduceAsync("joined.mixed." + i, tensors.get(i), ReduceOp.SUM));
                }
                float[] firstAndLast = new float[10];
                for (int i = 0; i < 5; i++) {
                    handles.get(i).await();
                    java.lang.foreign.MemorySegment seg = tensors.get(i).segment();
                    firstAndLast[2 * i] = seg.getAtIndex(java.lang.foreign.ValueLayout.JAVA_FLOAT, 0);
                    firstAndLast[2 * i + 1] = seg.getAtIndex(java.lang.foreign.ValueLayout.JAVA_FLOAT,
                            tensors.get(i).elements() - 1);
                }
                comm.join();
                return firstAndLast;
            }
        });
        for (int r = 0; r < 2; r++) {
            float[] got = sums.get(r);
            for (int i = 0; i < 5; i++) {
                long last = (i % 2 == 0 ? 5 + i : LARGE + i) - 1;
                // ranks 0 and 1 only: (1 + 2) (i + 1) (j % 7 + 1)
                assertEquals(3f * (i + 1), got[2 * i], "rank " + r + ", tensor " + i + ", first element");
                assertEquals(3f * (i + 1) * (last % 7 + 1), got[2 * i + 1], "rank " + r + ", tensor " + i + ", last");
            }
        }
    }
}
