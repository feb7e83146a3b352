package io.kolo;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

/** Every public collective, end to end through the engine, against straightforward references. */
class CollectivesApiTest {
    static final int[] SIZES = {1, 2, 3, 4, 5, 8};

    /** The element-wise ops; Adasum has a test of its own. */
    static final ReduceOp[] ELEMENTWISE = {ReduceOp.SUM, ReduceOp.AVERAGE, ReduceOp.MIN, ReduceOp.MAX, ReduceOp.PRODUCT};

    static Stream<Arguments> allreduceCases() {
        List<Arguments> cases = new ArrayList<>();
        for (int n : SIZES) {
            for (DataType t : DataType.values()) {
                for (ReduceOp op : ELEMENTWISE) {
                    for (int len : new int[]{0, 1, n > 1 ? n - 1 : 2, 7 * n + 3}) {
                        cases.add(Arguments.of(n, t, op, len));
                    }
                }
            }
        }
        return cases.stream();
    }

    /** Small integer values, representable exactly in every type (product kept small too). */
    static long valueFor(int rank, int i, ReduceOp op, DataType t) {
        if (op == ReduceOp.PRODUCT) {
            return (rank + i) % 3 == 0 ? 2 : 1;
        }
        long v = (rank * 7L + i * 3L) % 11;
        return t == DataType.UINT8 ? v : v - 5;
    }

    static double reference(int n, int i, ReduceOp op, DataType t) {
        double acc = valueFor(0, i, op, t);
        for (int r = 1; r < n; r++) {
            double v = valueFor(r, i, op, t);
            acc = switch (op) {
                case SUM, AVERAGE -> acc + v;
                case MIN -> Math.min(acc, v);
                case MAX -> Math.max(acc, v);
                case PRODUCT -> acc * v;
                case ADASUM -> throw new AssertionError("Adasum is not element-wise (AdasumTest)");
            };
        }
        if (op == ReduceOp.AVERAGE) {
            acc = t.isInteger() ? (long) (acc / n) : acc / n;
        }
        return acc;
    }

    @ParameterizedTest(name = "np={0} {1} {2} len={3}")
    @MethodSource("allreduceCases")
    void allreduceMatchesReference(int n, DataType type, ReduceOp op, int len) {
        List<double[]> results = Ranks.run(n, comm -> {
            Tensor t = TestTensors.filled(type, len, i -> valueFor(comm.rank(), i, op, type));
            comm.allreduce(t, op);
            return TestTensors.values(t);
        });
        for (int r = 0; r < n; r++) {
            for (int i = 0; i < len; i++) {
                double expected = reference(n, i, op, type);
                double tol = switch (type) {
                    case FLOAT16, BFLOAT16 -> Math.abs(expected) * 0.01 + 1e-3;
                    case FLOAT32 -> Math.abs(expected) * 1e-6 + 1e-7;
                    case FLOAT64 -> 1e-12;
                    default -> 0;
                };
                assertEquals(expected, results.get(r)[i], tol, "rank " + r + " element " + i);
            }
            assertArrayEquals(results.get(0), results.get(r), "ranks 0 and " + r + " differ");
        }
    }

    @ParameterizedTest(name = "np={0}")
    @ValueSource(ints = {1, 2, 3, 5, 8})
    void largeFloatAllreduceIsBitIdenticalAndCorrect(int n) {
        int len = (3 << 20) / 4 + 17; // a few MiB, not divisible by n
        List<float[]> results = Ranks.run(n, comm -> {
            float[] x = new float[len];
            java.util.Random rnd = new java.util.Random(comm.rank());
            for (int i = 0; i < len; i++) {
                x[i] = rnd.nextFloat();
            }
            comm.allreduce(x, ReduceOp.AVERAGE);
            return x;
        });
        float[][] inputs = new float[n][len];
        for (int r = 0; r < n; r++) {
            java.util.Random rnd = new java.util.Random(r);
            for (int i = 0; i < len; i++) {
                inputs[r][i] = rnd.nextFloat();
            }
        }
        for (int i = 0; i < len; i += 997) {
            double sum = 0;
            for (int r = 0; r < n; r++) {
                sum += inputs[r][i];
            }
            assertEquals(sum / n, results.get(0)[i], 1e-5);
        }
        for (int r = 1; r < n; r++) {
            assertArrayEquals(results.get(0), results.get(r), "rank " + r + " is not bit-identical to rank 0");
        }
    }

    @ParameterizedTest(name = "np={0}")
    @ValueSource(ints = {1, 2, 3, 4, 5, 8})
    void allgatherConcatenatesDifferentFirstDimensionsInRankOrder(int n) {
        List<Tensor> results = Ranks.run(n, comm -> {
            int rows = comm.rank() % 3; // some ranks send nothing
            double[] mine = new double[rows * 2];
            for (int i = 0; i < mine.length; i++) {
                mine[i] = comm.rank() * 100 + i;
            }
            return comm.allgather(Tensor.of(mine, rows, 2));
        });
        List<Double> expected = new ArrayList<>();
        for (int r = 0; r < n; r++) {
            for (int i = 0; i < (r % 3) * 2; i++) {
                expected.add(r * 100.0 + i);
            }
        }
        for (Tensor t : results) {
            assertArrayEquals(expected.stream().mapToDouble(Double::doubleValue).toArray(), t.doubles());
            assertArrayEquals(new long[]{expected.size() / 2, 2}, t.shape());
        }
    }

    @ParameterizedTest(name = "np={0}")
    @ValueSource(ints = {1, 2, 3, 4, 5, 8})
    void broadcastFromEveryRoot(int n) {
        for (int root = 0; root < n; root++) {
            int finalRoot = root;
            List<long[]> results = Ranks.run(n, comm -> {
                long[] x = new long[1000];
                Arrays.fill(x, comm.rank() == finalRoot ? 4242 + finalRoot : -1);
                return comm.broadcast(x, finalRoot);
            });
            for (long[] r : results) {
                assertEquals(4242 + root, r[999]);
                assertEquals(4242 + root, r[0]);
            }
        }
    }

    @ParameterizedTest(name = "np={0}")
    @ValueSource(ints = {1, 2, 3, 4, 5, 8})
    void alltoallWithUnevenSplits(int n) {
        // rank s sends (s + d) % 3 rows of value s*1000 + d*10 + row to rank d
        List<AlltoallResult> results = Ranks.run(n, comm -> {
            int s = comm.rank();
            long[] splits = new long[n];
            List<Integer> values = new ArrayList<>();
            for (int d = 0; d < n; d++) {
                splits[d] = (s + d) % 3;
                for (int row = 0; row < splits[d]; row++) {
                    values.add(s * 1000 + d * 10 + row);
                }
            }
            int[] data = values.stream().mapToInt(Integer::intValue).toArray();
            return comm.alltoall(Tensor.of(data, data.length), splits);
        });
        for (int d = 0; d < n; d++) {
            List<Integer> expected = new ArrayList<>();
            long[] expectedSplits = new long[n];
            for (int s = 0; s < n; s++) {
                expectedSplits[s] = (s + d) % 3;
                for (int row = 0; row < expectedSplits[s]; row++) {
                    expected.add(s * 1000 + d * 10 + row);
                }
            }
            assertArrayEquals(expected.stream().mapToInt(Integer::intValue).toArray(), results.get(d).tensor().ints());
            assertArrayEquals(expectedSplits, results.get(d).receivedSplits());
        }
    }

    @ParameterizedTest(name = "np={0}")
    @ValueSource(ints = {1, 2, 3, 4, 5, 8})
    void reducescatterGivesEachRankItsReducedRows(int n) {
        int rows = 2 * n + 1; // uneven: the first rank gets an extra row
        List<Tensor> results = Ranks.run(n, comm -> {
            float[] x = new float[rows * 3];
            for (int i = 0; i < x.length; i++) {
                x[i] = i + comm.rank();
            }
            return comm.reducescatter(Tensor.of(x, rows, 3), ReduceOp.SUM);
        });
        int start = 0;
        for (int r = 0; r < n; r++) {
            int myRows = rows / n + (r < rows % n ? 1 : 0);
            float[] got = results.get(r).floats();
            assertEquals(myRows * 3, got.length);
            for (int i = 0; i < got.length; i++) {
                int global = start * 3 + i;
                assertEquals(n * global + n * (n - 1) / 2.0, got[i], 0.0);
            }
            start += myRows;
        }
    }

    @ParameterizedTest(name = "np={0}")
    @ValueSource(ints = {2, 3})
    void offHeapTensorsReduceInPlace(int n) {
        List<float[]> results = Ranks.run(n, comm -> {
            ByteBuffer direct = ByteBuffer.allocateDirect(4 * 10).order(ByteOrder.nativeOrder());
            for (int i = 0; i < 10; i++) {
                direct.putFloat(i * 4, comm.rank() + i);
            }
            comm.allreduce(Tensor.of(direct, DataType.FLOAT32), ReduceOp.MAX);
            MemorySegment seg = Arena.ofAuto().allocate(8 * 4);
            for (int i = 0; i < 4; i++) {
                seg.setAtIndex(ValueLayout.JAVA_DOUBLE, i, comm.rank());
            }
            Tensor gathered = comm.allgather(Tensor.of(seg, DataType.FLOAT64, 4));
            if (!gathered.isNative() || gathered.elements() != 4L * n) {
                throw new AssertionError("allgather of off-heap memory should return off-heap memory of 4n elements");
            }
            // A heap segment (a Java array's memory, here bytes viewed as doubles): the result stays on the heap.
            MemorySegment heap = MemorySegment.ofArray(new byte[8 * 3]);
            for (int i = 0; i < 3; i++) {
                heap.set(ValueLayout.JAVA_DOUBLE_UNALIGNED, 8L * i, comm.rank() * 10.0 + i);
            }
            Tensor onHeap = comm.allgather(Tensor.of(heap, DataType.FLOAT64, 3));
            if (onHeap.isNative() || onHeap.elements() != 3L * n) {
                throw new AssertionError("allgather of heap memory should return heap memory of 3n elements");
            }
            for (int r = 0; r < n; r++) {
                for (int i = 0; i < 3; i++) {
                    double v = onHeap.segment().get(ValueLayout.JAVA_DOUBLE_UNALIGNED, 8L * (3 * r + i));
                    if (v != r * 10.0 + i) {
                        throw new AssertionError("allgather of heap memory: element " + (3 * r + i) + " is " + v);
                    }
                }
            }
            float[] out = new float[10];
            for (int i = 0; i < 10; i++) {
                out[i] = direct.getFloat(i * 4);
            }
            return out;
        });
        for (float[] r : results) {
            for (int i = 0; i < 10; i++) {
                assertEquals(n - 1 + i, r[i], 0.0);
            }
        }
    }

    @ParameterizedTest(name = "np={0}")
    @ValueSource(ints = {1, 3, 4})
    void scaleFactorsApplyBeforeAndAfter(int n) {
        List<double[]> results = Ranks.run(n, comm -> {
            double[] x = {1, 2, 3};
            comm.allreduceAsync("scaled", Tensor.of(x), ReduceOp.SUM, 0.5, 3.0).await();
            return x;
        });
        for (double[] r : results) {
            assertArrayEquals(new double[]{1.5 * n, 3.0 * n, 4.5 * n}, r, 1e-12);
        }
    }

    @ParameterizedTest(name = "np={0}")
    @ValueSource(ints = {1, 2, 5})
    void objectsTravel(int n) {
        List<List<String>> results = Ranks.run(n, comm -> {
            String fromRoot = comm.broadcastObject(comm.rank() == 0 ? "config-from-0" : null, 0);
            List<String> all = comm.allgatherObject("rank-" + comm.rank() + "-" + fromRoot);
            comm.barrier();
            return all;
        });
        for (List<String> r : results) {
            List<String> expected = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                expected.add("rank-" + i + "-config-from-0");
            }
            assertEquals(expected, r);
        }
    }
}
