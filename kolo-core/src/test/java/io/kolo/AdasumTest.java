package io.kolo;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** ReduceOp.ADASUM against a straightforward reference, at 2, 3, 4, 5 and 8 ranks (threads of this JVM). */
class AdasumTest {

    /** The documented combination of two vectors, in plain doubles. */
    private static double[] combine(double[] a, double[] b) {
        double dot = 0;
        double aa = 0;
        double bb = 0;
        for (int i = 0; i < a.length; i++) {
            dot += a[i] * b[i];
            aa += a[i] * a[i];
            bb += b[i] * b[i];
        }
        double ca = aa == 0 ? 1 : 1 - dot / (2 * aa);
        double cb = bb == 0 ? 1 : 1 - dot / (2 * bb);
        double[] out = new double[a.length];
        for (int i = 0; i < a.length; i++) {
            out[i] = ca * a[i] + cb * b[i];
        }
        return out;
    }

    /**
     * The documented tree: pairs (0,1), (2,3), ... of the first 2(n - 2^k) ranks combine first; then levels of a
     * binary tree over the 2^k leaves in rank order, lower leaf as a.
     */
    private static double[] reference(List<double[]> vectors) {
        int n = vectors.size();
        int pow2 = Integer.highestOneBit(n);
        int extra = n - pow2;
        List<double[]> leaves = new ArrayList<>();
        for (int i = 0; i < extra; i++) {
            leaves.add(combine(vectors.get(2 * i), vectors.get(2 * i + 1)));
        }
        leaves.addAll(vectors.subList(2 * extra, n));
        while (leaves.size() > 1) {
            List<double[]> next = new ArrayList<>();
            for (int i = 0; i < leaves.size(); i += 2) {
                next.add(combine(leaves.get(i), leaves.get(i + 1)));
            }
            leaves = next;
        }
        return leaves.getFirst();
    }

    private static List<double[]> random(int n, int length, long seed) {
        Random r = new Random(seed);
        List<double[]> v = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            v.add(r.doubles(length, -1, 1).toArray());
        }
        return v;
    }

    @ParameterizedTest
    @ValueSource(ints = {2, 3, 4, 5, 8})
    void matchesTheReferenceAndIsBitIdenticalOnEveryRank(int n) {
        List<double[]> inputs = random(n, 1000, 42 + n);
        double[] expected = reference(inputs);
        List<double[]> got = Ranks.run(n, comm -> comm.allreduce(inputs.get(comm.rank()).clone(), ReduceOp.ADASUM));
        for (int r = 0; r < n; r++) {
            for (int i = 0; i < expected.length; i++) {
                assertEquals(expected[i], got.get(r)[i], 1e-12 * Math.max(1, Math.abs(expected[i])),
                        "rank " + r + " element " + i);
            }
            assertArrayEquals(got.get(0), got.get(r), "rank " + r + " differs from rank 0 in some bit");
        }
    }

    @ParameterizedTest
    @ValueSource(ints = {2, 3, 4, 8})
    void orthogonalGradientsAddUpAndParallelOnesAverage(int n) {
        // Rank r's gradient is the unit vector e_r: orthogonal, so the result is their sum.
        List<float[]> sum = Ranks.run(n, comm -> {
            float[] g = new float[n];
            g[comm.rank()] = 1f;
            return comm.allreduce(g, ReduceOp.ADASUM);
        });
        float[] ones = new float[n];
        Arrays.fill(ones, 1f);
        for (float[] s : sum) {
            assertArrayEquals(ones, s);
        }
        // Every rank the same gradient: the result is that gradient, not n times it.
        float[] same = {0.5f, -2f, 3.25f, 8f};
        for (float[] s : Ranks.run(n, comm -> comm.allreduce(same.clone(), ReduceOp.ADASUM))) {
            assertArrayEquals(same, s);
        }
    }

    @ParameterizedTest
    @ValueSource(ints = {2, 3, 4})
    void zeroVectorsGiveNoNaN(int n) {
        for (double[] s : Ranks.run(n, comm -> comm.allreduce(new double[16], ReduceOp.ADASUM))) {
            assertArrayEquals(new double[16], s);
        }
        // Only rank 1 has a gradient: it comes through unchanged.
        double[] g = {1, 2, 3};
        for (double[] s : Ranks.run(n, comm -> comm.allreduce(comm.rank() == 1 ? g.clone() : new double[3],
                ReduceOp.ADASUM))) {
            assertArrayEquals(g, s);
        }
    }

    @Test
    void sixteenBitFloatsFollowTheReferenceWithinTheirPrecision() {
        List<double[]> inputs = random(4, 64, 7);
        double[] expected = reference(inputs);
        for (DataType type : new DataType[] {DataType.FLOAT16, DataType.BFLOAT16}) {
            boolean half = type == DataType.FLOAT16;
            List<float[]> got = Ranks.run(4, comm -> {
                short[] mine = new short[64];
                for (int i = 0; i < mine.length; i++) {
                    float v = (float) inputs.get(comm.rank())[i];
                    mine[i] = half ? Float16.fromFloat(v) : BFloat16.fromFloat(v);
                }
                Tensor t = Tensor.of(mine, type);
                comm.allreduce(t, ReduceOp.ADASUM);
                short[] out = t.shorts();
                float[] back = new float[out.length];
                for (int i = 0; i < out.length; i++) {
                    back[i] = half ? Float16.toFloat(out[i]) : BFloat16.toFloat(out[i]);
                }
                return back;
            });
            for (int i = 0; i < expected.length; i++) {
                assertEquals(expected[i], got.get(0)[i], type == DataType.FLOAT16 ? 0.02 : 0.1, type + " element " + i);
                assertTrue(Float.isFinite(got.get(0)[i]));
            }
            assertArrayEquals(got.get(0), got.get(3));
        }
    }

    @Test
    void fusedTensorsKeepTheirOwnDotProducts() {
        // Two tensors of one group: fused for negotiation, combined separately.
        List<List<double[]>> inputs = List.of(random(2, 50, 1), random(2, 70, 2));
        List<List<Tensor>> got = Ranks.run(2, comm -> comm.groupedAllreduce(List.of(
                Tensor.of(inputs.get(0).get(comm.rank()).clone()), Tensor.of(inputs.get(1).get(comm.rank()).clone())),
                ReduceOp.ADASUM));
        for (int t = 0; t < 2; t++) {
            double[] expected = reference(inputs.get(t));
            double[] actual = got.get(0).get(t).doubles();
            for (int i = 0; i < expected.length; i++) {
                assertEquals(expected[i], actual[i], 1e-12, "tensor " + t + " element " + i);
            }
        }
    }

    @Test
    void integersAndReducescatterAreRefusedOnEveryRankBeforeAnythingRuns() {
        List<Ranks.Outcome<Object>> outcomes = Ranks.outcomes(3, java.util.Map.of(),
                comm -> comm.allreduce(new int[] {1, 2}, ReduceOp.ADASUM));
        for (Ranks.Outcome<Object> o : outcomes) {
            IllegalArgumentException e = (IllegalArgumentException) o.error();
            assertEquals("ReduceOp.ADASUM combines floating-point tensors (FLOAT16, BFLOAT16, FLOAT32, FLOAT64), not"
                    + " INT32; use SUM or AVERAGE for integers", e.getMessage());
        }
        List<Ranks.Outcome<Object>> rs = Ranks.outcomes(2, java.util.Map.of(),
                comm -> comm.reducescatter(Tensor.of(new float[4]), ReduceOp.ADASUM));
        for (Ranks.Outcome<Object> o : rs) {
            assertTrue(o.error() instanceof IllegalArgumentException, String.valueOf(o.error()));
        }
        // The communicators still work afterwards: nothing was submitted.
        assertEquals(List.of(3.0, 3.0), Ranks.run(2, comm -> comm.allreduce(new double[] {comm.rank() + 1},
                ReduceOp.SUM)[0]));
    }

    /** Hierarchical (as Horovod across nodes): each host's ranks sum, the hosts' sums combine by Adasum. */
    @Test
    void acrossHostsTheHostsSumsCombineByAdasum() {
        List<double[]> inputs = random(6, 300, 11);
        List<double[]> hostSums = new ArrayList<>();
        for (int h = 0; h < 3; h++) {
            double[] sum = new double[300];
            for (int i = 0; i < sum.length; i++) {
                sum[i] = inputs.get(2 * h)[i] + inputs.get(2 * h + 1)[i];
            }
            hostSums.add(sum);
        }
        double[] expected = reference(hostSums);
        List<double[]> got = Ranks.runHosts(3, 2, java.util.Map.of("KOLO_HIERARCHICAL_ALLREDUCE", "1"),
                comm -> comm.allreduce(inputs.get(comm.rank()).clone(), ReduceOp.ADASUM));
        for (int r = 0; r < 6; r++) {
            for (int i = 0; i < expected.length; i++) {
                assertEquals(expected[i], got.get(r)[i], 1e-9, "rank " + r + " element " + i);
            }
            assertArrayEquals(got.get(0), got.get(r), "rank " + r + " differs from rank 0 in some bit");
        }
    }
}
