package io.kolo;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** fp16/bf16-compressed allreduce, end to end through the engine, against the uncompressed result. */
class CompressionTest {

    static final int RANKS = 4;
    static final int LEN = 5_003;

    /** Relative precision of one rounding to the wire type, times a few roundings of partial sums. */
    static double tolerance(Compression c) {
        return (c == Compression.FP16 ? 0x1p-11 : 0x1p-8) * (RANKS + 2);
    }

    static float[] gradient(int rank) {
        SplittableRandom rnd = new SplittableRandom(rank);
        float[] x = new float[LEN];
        for (int i = 0; i < LEN; i++) {
            x[i] = (float) (rnd.nextDouble(0.5, 2.0) * (rnd.nextBoolean() ? 1 : -1) * Math.exp(rnd.nextInt(-4, 5)));
        }
        return x;
    }

    @ParameterizedTest
    @EnumSource(value = Compression.class, names = {"FP16", "BF16"})
    void compressedSumAndAverageStayWithinToleranceOfUncompressed(Compression c) {
        for (ReduceOp op : new ReduceOp[] {ReduceOp.SUM, ReduceOp.AVERAGE}) {
            List<float[]> compressed = Ranks.run(RANKS, comm -> comm.allreduce(gradient(comm.rank()), op, c));
            List<double[]> exact = Ranks.run(RANKS, comm -> {
                float[] g = gradient(comm.rank());
                double[] d = new double[LEN];
                double[] magnitude = new double[LEN];
                for (int i = 0; i < LEN; i++) {
                    d[i] = g[i];
                    magnitude[i] = Math.abs(g[i]);
                }
                comm.allreduce(d, op);
                comm.allreduce(magnitude, op);
                double[] both = new double[2 * LEN];
                System.arraycopy(d, 0, both, 0, LEN);
                System.arraycopy(magnitude, 0, both, LEN, LEN);
                return both;
            });
            boolean anyLoss = false;
            for (int i = 0; i < LEN; i++) {
                double want = exact.get(0)[i];
                double scale = exact.get(0)[LEN + i];
                float got = compressed.get(0)[i];
                assertEquals(want, got, scale * tolerance(c), c + " " + op + " element " + i);
                anyLoss |= got != (float) want;
            }
            // Guards the test: the values must actually have gone through 16 bits.
            assertTrue(anyLoss, "no precision lost: was the tensor compressed?");
            for (int r = 1; r < RANKS; r++) {
                assertArrayEquals(compressed.get(0), compressed.get(r), "rank " + r + " differs from rank 0");
            }
        }
    }

    /**
     * Four ranks with 60000 each: the fp16 SUM overflows (65504 is fp16's largest value, documented trade-off),
     * while AVERAGE divides while compressing and stays exact.
     */
    @Test
    void averageIsDividedBeforeTheSixteenBitSumSoItDoesNotOverflow() {
        List<float[]> avg = Ranks.run(RANKS, comm -> comm.allreduce(new float[] {60_000f, -1f}, ReduceOp.AVERAGE,
                Compression.FP16));
        List<float[]> sum = Ranks.run(RANKS, comm -> comm.allreduce(new float[] {60_000f, -1f}, ReduceOp.SUM,
                Compression.FP16));
        for (int r = 0; r < RANKS; r++) {
            assertArrayEquals(new float[] {60_000f, -1f}, avg.get(r));
            assertEquals(Float.POSITIVE_INFINITY, sum.get(r)[0]);
            assertEquals(-4f, sum.get(r)[1]);
        }
        // bf16 has float32's range: the sum is finite, rounded to 8 significant bits.
        List<float[]> bf = Ranks.run(RANKS, comm -> comm.allreduce(new float[] {60_000f}, ReduceOp.SUM,
                Compression.BF16));
        assertEquals(240_000f, bf.get(0)[0], 240_000f * 0x1p-7);
    }

    /** Steps of a training loop reuse the pooled 16-bit copies; each step's result must be its own. */
    @Test
    void repeatedStepsReuseBuffersWithoutMixingResults() {
        List<float[]> out = Ranks.run(RANKS, comm -> {
            float[] last = null;
            for (int step = 1; step <= 6; step++) {
                float[] a = new float[33];
                float[] b = new float[33];
                java.util.Arrays.fill(a, step);
                java.util.Arrays.fill(b, -step);
                Handle<Tensor> ha = comm.allreduceAsync("a", Tensor.of(a), ReduceOp.SUM, Compression.FP16);
                Handle<Tensor> hb = comm.allreduceAsync("b", Tensor.of(b), ReduceOp.SUM, Compression.FP16);
                ha.await();
                hb.await();
                assertEquals(RANKS * step, a[32]);
                assertEquals(-RANKS * step, b[0]);
                last = a;
            }
            return last;
        });
        assertEquals(RANKS * 6, out.get(0)[0]);
    }

    @Test
    void doublesPrescaleAndPostscaleAreHonoured() {
        List<double[]> out = Ranks.run(RANKS, comm -> {
            double[] x = {comm.rank() + 1, 0.5};
            comm.allreduceAsync("d", Tensor.of(x), ReduceOp.SUM, 2.0, 0.25, Compression.BF16).await();
            return x;
        });
        for (double[] x : out) {
            // (1+2+3+4)*2*0.25 = 5, 4*0.5*2*0.25 = 1: both exact in bf16.
            assertArrayEquals(new double[] {5, 1}, x);
        }
    }

    /** Integer tensors are never compressed: a sum beyond fp16's 11 significant bits stays exact. */
    @Test
    void integerTensorsAreUntouched() {
        List<int[]> ints = Ranks.run(RANKS, comm -> comm.allreduce(Tensor.of(new int[] {100_003 + comm.rank(), -7}),
                ReduceOp.SUM, Compression.FP16).ints());
        List<long[]> longs = Ranks.run(RANKS, comm -> {
            long[] x = {(1L << 40) + comm.rank()};
            comm.allreduceAsync("l", Tensor.of(x), ReduceOp.AVERAGE, Compression.BF16).await();
            return x;
        });
        for (int r = 0; r < RANKS; r++) {
            assertArrayEquals(new int[] {400_018, -28}, ints.get(r));
            assertArrayEquals(new long[] {(1L << 40) + 1}, longs.get(r));
        }
    }

    @Test
    void groupedAllreduceCompressesOnlyTheFloatMembers() {
        List<List<Tensor>> out = Ranks.run(RANKS, comm -> comm.groupedAllreduce(
                List.of(Tensor.of(new float[] {1.001f, 3}), Tensor.of(new int[] {100_003})), ReduceOp.SUM,
                Compression.FP16));
        for (List<Tensor> ts : out) {
            // 1.001 rounds to 1.0009765625 in fp16; four of those sum to 4.00390625, again an fp16 value.
            assertArrayEquals(new float[] {4.00390625f, 12}, ts.get(0).floats());
            assertArrayEquals(new int[] {400_012}, ts.get(1).ints());
        }
    }

    @Test
    void environmentDefaultCompressesAllreducesThatNameNone() {
        List<float[]> out = Ranks.run(RANKS, Map.of("KOLO_COMPRESSION", "bf16"),
                comm -> comm.allreduce(new float[] {1.001f}, ReduceOp.SUM));
        // 1.001 becomes bf16 1.0 on every rank.
        assertEquals(4f, out.get(0)[0]);
        List<float[]> plain = Ranks.run(RANKS, comm -> comm.allreduce(new float[] {1.001f}, ReduceOp.SUM));
        assertEquals(4.004f, plain.get(0)[0], 1e-6);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> Communicator.local(2, Map.of("KOLO_COMPRESSION", "zip")));
        assertTrue(e.getMessage().contains("KOLO_COMPRESSION='zip'"), e.getMessage());
    }

    @Test
    void ranksThatDisagreeOnCompressionFailEveryRankWithAHint() {
        var outcomes = Ranks.<Object>outcomes(3, Map.of(), comm -> comm.allreduceAsync("g", Tensor.of(new float[4]),
                ReduceOp.AVERAGE, comm.rank() == 1 ? Compression.FP16 : Compression.NONE).await());
        for (int r = 0; r < outcomes.size(); r++) {
            Throwable e = outcomes.get(r).error();
            assertNotNull(e, "rank " + r + " should have failed");
            assertInstanceOf(KoloException.class, e);
            assertTrue(e.getMessage().contains("rank 1 submitted FLOAT16[4] SUM")
                    && e.getMessage().contains("rank 0 submitted FLOAT32[4] AVERAGE")
                    && e.getMessage().contains("same Compression"), e.getMessage());
        }
    }
}
