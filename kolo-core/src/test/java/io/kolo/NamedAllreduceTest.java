package io.kolo;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The blocking named allreduce ({@code comm.allreduce("loss", t, op)}): a small one repeated under its name runs on the
 * caller's thread as the payload of the engine's vote, with no op or handle. It must give the results of the ordinary
 * path whatever the other ranks do (call it blocking, asynchronously, late), keep the name's claim, and fail rather
 * than hang when a rank leaves.
 */
class NamedAllreduceTest {
    private static final int STEPS = 300;

    /** A loss averaged every step under one name; returns the engine's counts afterwards. */
    private static EngineStats averageLoss(Communicator comm, int steps) throws InterruptedException {
        int n = comm.size();
        float[] loss = new float[1];
        Tensor t = Tensor.of(loss);
        for (int i = 0; i < steps; i++) {
            if (comm.rank() == n - 1 && i % 25 == 7) {
                Thread.sleep(20);   // a late rank: the others' first try cannot finish, their op waits as usual
            }
            loss[0] = comm.rank() + i;
            comm.allreduce("loss", t, ReduceOp.AVERAGE);
            assertEquals(i + (n - 1) / 2.0f, loss[0], 1e-4f, "step " + i);
        }
        return comm.stats();
    }

    @ParameterizedTest
    @ValueSource(ints = {2, 3})
    void aLossAveragedEveryStepIsRightAndRidesWithTheNegotiation(int size) {
        for (EngineStats s : Ranks.run(size, comm -> averageLoss(comm, STEPS))) {
            // Every step ran and was counted; once the name was cached, most ran with the vote.
            assertTrue(s.completedOps() >= STEPS, s.toString());
            assertTrue(s.eagerOps() > STEPS / 2, s.toString());
        }
    }

    @Test
    void ranksMayCallItBlockingOrAsynchronouslyWithFactors() {
        List<double[]> results = Ranks.run(3, comm -> {
            double[] v = new double[5];
            Tensor t = Tensor.of(v);
            for (int i = 0; i < 200; i++) {
                java.util.Arrays.fill(v, comm.rank() + i);
                if (comm.rank() == 1 || (comm.rank() == 2 && i % 2 == 0)) {
                    comm.allreduceAsync("metric", t, ReduceOp.SUM, 2.0, 0.25).await();
                } else {
                    comm.allreduce("metric", t, ReduceOp.SUM, 2.0, 0.25);
                }
                // (0 + 1 + 2 + 3i) * 2 * 0.25
                assertEquals((3 + 3.0 * i) * 0.5, v[4], 1e-9, "step " + i + " on rank " + comm.rank());
            }
            return v;
        });
        assertEquals(3, results.size());
    }

    @Test
    void inAProcessSetAsInTheGlobalSet() {
        List<float[]> out = Ranks.run(4, Map.of("KOLO_DYNAMIC_PROCESS_SETS", "1"), comm -> {
            ProcessSet even = comm.addProcessSet(0, 2);
            ProcessSet odd = comm.addProcessSet(1, 3);
            ProcessSet mine = comm.rank() % 2 == 0 ? even : odd;
            float[] x = new float[2];
            float[] all = new float[1];
            for (int i = 0; i < 100; i++) {
                x[0] = comm.rank() + 1;
                x[1] = i;
                comm.on(mine).allreduce("set.metric", Tensor.of(x), ReduceOp.SUM);
                all[0] = 1;
                comm.allreduce("all.metric", Tensor.of(all), ReduceOp.SUM);
                assertEquals(2f * i, x[1], "step " + i);
                assertEquals(4f, all[0], "step " + i);
            }
            assertTrue(comm.stats().eagerOps() > 100, comm.stats().toString());
            return x;
        });
        assertEquals(4f, out.get(0)[0]);   // ranks 0 and 2: 1 + 3
        assertEquals(6f, out.get(1)[0]);   // ranks 1 and 3: 2 + 4
        assertEquals(4f, out.get(2)[0]);
        assertEquals(6f, out.get(3)[0]);
    }

    @Test
    void kolosStaticFormsTakeANameToo() {
        Kolo.init(Map.of());   // a job of one rank in this JVM
        try {
            for (int i = 0; i < 50; i++) {
                float[] f = {i};
                assertSame(f, Kolo.allreduce("f", f, ReduceOp.SUM));
                assertEquals(i, f[0]);
                double[] d = {i, 2};
                assertSame(d, Kolo.allreduce("d", d, ReduceOp.AVERAGE));
                assertEquals(2.0, d[1]);
                Tensor t = Tensor.of(new long[]{i});
                assertSame(t, Kolo.allreduce("t", t, ReduceOp.MAX));
            }
            assertTrue(Kolo.communicator().stats().completedOps() >= 150, Kolo.communicator().stats().toString());
        } finally {
            Kolo.shutdown();
        }
    }

    @Test
    void aNameInFlightIsRefusedAndTheOpStillCompletes() {
        CountDownLatch refused = new CountDownLatch(1);
        Ranks.run(2, comm -> {
            float[] m = new float[1];
            Tensor t = Tensor.of(m);
            for (int i = 0; i < 20; i++) {
                m[0] = 1;
                comm.allreduce("m", t, ReduceOp.SUM);
            }
            m[0] = 1;
            if (comm.rank() == 0) {
                Handle<Tensor> first = comm.allreduceAsync("m", t, ReduceOp.SUM);
                IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                        () -> comm.allreduce("m", Tensor.of(new float[1]), ReduceOp.SUM));
                assertTrue(e.getMessage().contains("'m' is already in flight on rank 0"), e.getMessage());
                refused.countDown();
                first.await();
            } else {
                assertTrue(refused.await(60, TimeUnit.SECONDS), "rank 0 never tried");
                comm.allreduce("m", t, ReduceOp.SUM);
            }
            assertEquals(2f, m[0]);
            return null;
        });
    }

    @Test
    void aNameWhoseRequestChangesGoesTheOrdinaryWayEverywhere() {
        Ranks.run(2, comm -> {
            for (int i = 0; i < 30; i++) {
                // Every fifth step the tensor is longer than the eager payload, or another type: the cache's answer
                // no longer fits, so the op must not ride with the vote, on either rank.
                int n = i % 5 == 4 ? 3000 : 3;
                if (i % 10 == 9) {
                    long[] l = new long[n];
                    java.util.Arrays.fill(l, comm.rank() + 1);
                    comm.allreduce("x", Tensor.of(l), ReduceOp.SUM);
                    assertEquals(3L, l[n - 1], "step " + i);
                } else {
                    int[] a = new int[n];
                    java.util.Arrays.fill(a, comm.rank() + 1);
                    comm.allreduce("x", Tensor.of(a), ReduceOp.MAX);
                    assertEquals(2, a[n - 1], "step " + i);
                }
            }
            return null;
        });
    }

    @Test
    void aRankThatLeavesEndsThePeersNextCallWithAnErrorNotAHang() {
        List<Ranks.Outcome<String>> outcomes = Ranks.outcomes(2, Map.of("KOLO_TIMEOUT_SECONDS", "30"), comm -> {
            float[] v = new float[2];
            Tensor t = Tensor.of(v);
            for (int i = 0; i < 50; i++) {
                comm.allreduce("v", t, ReduceOp.SUM);
            }
            if (comm.rank() == 1) {
                comm.close();
                return "left";
            }
            for (int i = 0; i < 1000; i++) {
                comm.allreduce("v", t, ReduceOp.SUM);
            }
            return "all 1000 ran";
        });
        assertEquals("left", outcomes.get(1).get());
        Throwable e = outcomes.get(0).error();
        assertTrue(e instanceof KoloException, "rank 0: " + (e != null ? e : outcomes.get(0).value()));
        assertTrue(e.getMessage().contains("shut down"), e.getMessage());
    }
}
