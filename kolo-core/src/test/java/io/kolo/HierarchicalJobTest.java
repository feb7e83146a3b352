package io.kolo;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

/**
 * Jobs whose ranks believe they run on several hosts (in-JVM, packed host by host), end to end through the
 * engine: the hierarchical collectives must give what the flat ones give.
 */
class HierarchicalJobTest {

    /** Threshold 0: every allreduce of at least localSize elements (the engine's own bit vectors too) is hierarchical. */
    static final Map<String, String> ALWAYS = Map.of("KOLO_SMALL_ALLREDUCE_BYTES", "0",
            "KOLO_HIERARCHICAL_ALLGATHER", "1");

    static Stream<Arguments> cases() {
        List<Arguments> out = new ArrayList<>();
        for (int[] shape : new int[][] {{2, 2}, {3, 2}, {2, 3}}) {
            for (DataType t : DataType.values()) {
                for (ReduceOp op : CollectivesApiTest.ELEMENTWISE) {
                    out.add(Arguments.of(shape[0], shape[1], t, op));
                }
            }
        }
        return out.stream();
    }

    @ParameterizedTest(name = "{0} hosts x {1} {2} {3}")
    @MethodSource("cases")
    void allreduceMatchesReference(int hosts, int perHost, DataType type, ReduceOp op) {
        int n = hosts * perHost;
        for (int len : new int[] {0, 1, perHost + 1, 7 * n + 3}) {
            List<double[]> results = Ranks.runHosts(hosts, perHost, ALWAYS, comm -> {
                Tensor t = TestTensors.filled(type, len, i -> CollectivesApiTest.valueFor(comm.rank(), i, op, type));
                comm.allreduce(t, op);
                return TestTensors.values(t);
            });
            for (int r = 0; r < n; r++) {
                for (int i = 0; i < len; i++) {
                    double expected = CollectivesApiTest.reference(n, i, op, type);
                    double tol = type.isInteger() ? 0 : Math.abs(expected) * 0.01 + 1e-3;
                    assertEquals(expected, results.get(r)[i], tol, "rank " + r + " element " + i + " len " + len);
                }
                assertArrayEquals(results.get(0), results.get(r), "ranks 0 and " + r + " differ");
            }
        }
    }

    /** Random floats: bit-identical on every rank, within rounding of the flat job's answer (not equal to it). */
    @Test
    void largeFloatAverageAgreesWithFlatWithinRounding() {
        int len = (1 << 18) + 17;
        Ranks.Body<float[]> body = comm -> {
            float[] x = new float[len];
            java.util.SplittableRandom rnd = new java.util.SplittableRandom(comm.rank());
            for (int i = 0; i < len; i++) {
                x[i] = (float) (rnd.nextGaussian() * Math.exp(rnd.nextInt(-8, 8)));
            }
            comm.allreduce(x, ReduceOp.AVERAGE);
            return x;
        };
        List<float[]> hier = Ranks.runHosts(2, 3, Map.of(), body);
        List<float[]> flat = Ranks.run(6, body);
        for (int r = 1; r < 6; r++) {
            assertArrayEquals(hier.get(0), hier.get(r), "rank " + r + " is not bit-identical to rank 0");
        }
        int differing = 0;
        for (int i = 0; i < len; i++) {
            assertEquals(flat.get(0)[i], hier.get(0)[i], Math.ulp(Math.abs(flat.get(0)[i])) * 64 + 1e-3f, "element " + i);
            differing += hier.get(0)[i] != flat.get(0)[i] ? 1 : 0;
        }
        // Guards the test: identical bits everywhere would mean the hierarchical path never ran.
        assertNotEquals(0, differing, "hierarchical and flat results are identical; was the hierarchical path used?");
    }

    @Test
    void allgatherOfRaggedRowsIsInRankOrder() {
        List<Tensor> results = Ranks.runHosts(3, 2, ALWAYS, comm -> {
            int rows = comm.rank() % 3;
            double[] mine = new double[rows * 2];
            for (int i = 0; i < mine.length; i++) {
                mine[i] = comm.rank() * 100 + i;
            }
            return comm.allgather(Tensor.of(mine, rows, 2));
        });
        List<Double> expected = new ArrayList<>();
        for (int r = 0; r < 6; r++) {
            for (int i = 0; i < (r % 3) * 2; i++) {
                expected.add(r * 100.0 + i);
            }
        }
        for (Tensor t : results) {
            assertArrayEquals(expected.stream().mapToDouble(Double::doubleValue).toArray(), t.doubles());
        }
    }

    @Test
    void hierarchicalOffStillWorks() {
        List<long[]> results = Ranks.runHosts(2, 2, Map.of("KOLO_HIERARCHICAL_ALLREDUCE", "0"),
                comm -> comm.allreduce(new long[] {comm.rank(), 1}, ReduceOp.SUM));
        for (long[] r : results) {
            assertArrayEquals(new long[] {6, 4}, r);
        }
    }
}
