package io.kolo;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Allgather into memory the caller keeps: correct, in place of the caller's output, and a misfit fails one rank only. */
class AllgatherIntoTest {

    /** Rank r sends r % 3 rows of 2 (some send none); element i of rank r's block is r * 100 + i + 1000 * call. */
    static double[] expected(int n, int call) {
        int total = 0;
        for (int r = 0; r < n; r++) {
            total += (r % 3) * 2;
        }
        double[] e = new double[total];
        int k = 0;
        for (int r = 0; r < n; r++) {
            for (int i = 0; i < (r % 3) * 2; i++) {
                e[k++] = r * 100 + i + 1000 * call;
            }
        }
        return e;
    }

    static Tensor mine(int rank, int call) {
        int rows = rank % 3;
        double[] d = new double[rows * 2];
        for (int i = 0; i < d.length; i++) {
            d[i] = rank * 100 + i + 1000 * call;
        }
        return Tensor.of(d, rows, 2);
    }

    @ParameterizedTest(name = "np={0}")
    @ValueSource(ints = {1, 2, 3, 5})
    void gathersIntoTheSameNativeMemoryCallAfterCall(int n) {
        int total = expected(n, 0).length;
        List<double[][]> results = Ranks.run(n, comm -> {
            try (Arena arena = Arena.ofShared()) { // the engine thread writes into it
                MemorySegment out = arena.allocate(8L * Math.max(total, 1));
                Tensor output = Tensor.of(out.asSlice(0, 8L * total), DataType.FLOAT64, total / 2, 2);
                double[][] seen = new double[3][];
                for (int call = 0; call < 3; call++) {
                    Tensor got = comm.allgatherInto(mine(comm.rank(), call), output);
                    assertSame(output, got, "allgatherInto returns the caller's output");
                    seen[call] = out.asSlice(0, 8L * total).toArray(ValueLayout.JAVA_DOUBLE);
                }
                return seen;
            }
        });
        for (int r = 0; r < n; r++) {
            for (int call = 0; call < 3; call++) {
                assertArrayEquals(expected(n, call), results.get(r)[call], "rank " + r + " call " + call);
            }
        }
    }

    @ParameterizedTest(name = "np={0}")
    @ValueSource(ints = {2, 4})
    void gathersArraysIntoAFlatArray(int n) {
        int len = (1 << 18) + 3; // large enough for the ring's pieces, odd
        List<float[]> results = Ranks.run(n, comm -> {
            float[] data = new float[len];
            for (int i = 0; i < len; i++) {
                data[i] = comm.rank() * len + i;
            }
            float[] out = new float[n * len];
            assertSame(out, comm.allgatherInto(data, out));
            return out;
        });
        for (int r = 0; r < n; r++) {
            float[] out = results.get(r);
            for (int i = 0; i < out.length; i++) {
                if (out[i] != (float) i) {
                    throw new AssertionError("rank " + r + " element " + i + " is " + out[i]);
                }
            }
        }
    }

    @Test
    void anOutputOfTheWrongSizeFailsThatRankOnlyAndTheJobGoesOn() {
        int n = 3;
        List<Ranks.Outcome<double[]>> outcomes = Ranks.outcomes(n, Map.of(), comm -> {
            // Rank 1 passes room for one element too few; the others pass the right size.
            int total = expected(n, 0).length;
            double[] out = new double[comm.rank() == 1 ? total - 1 : total];
            Throwable failure = null;
            try {
                comm.allgatherInto(mine(comm.rank(), 0), Tensor.of(out, out.length));
            } catch (KoloException e) {
                failure = e;
            }
            if ((comm.rank() == 1) != (failure != null)) {
                throw new AssertionError("rank " + comm.rank() + ": failure " + failure);
            }
            if (failure != null) {
                String m = failure.getMessage();
                assertTrue(m.contains("has " + (total - 1) + " elements but the result has " + total), m);
                assertTrue(m.contains("rank 1"), m);
            }
            // The next op of the job runs on every rank, the failed one included.
            double[] again = new double[total];
            comm.allgatherInto(mine(comm.rank(), 1), Tensor.of(again, again.length));
            return again;
        });
        for (int r = 0; r < n; r++) {
            assertNull(outcomes.get(r).error(), "rank " + r);
            assertArrayEquals(expected(n, 1), outcomes.get(r).value(), "rank " + r);
        }
    }

    @Test
    void anOutputOfAnotherTypeFailsWithTheTypeItNeeds() {
        List<Ranks.Outcome<Object>> outcomes = Ranks.outcomes(2, Map.of(), comm -> {
            comm.allgatherInto(Tensor.of(new float[]{comm.rank()}, 1), Tensor.of(new int[2], 2));
            return null;
        });
        for (Ranks.Outcome<Object> o : outcomes) {
            assertInstanceOf(KoloException.class, o.error());
            String m = o.error().getMessage();
            assertTrue(m.contains("the output tensor is INT32 but the gathered tensors are FLOAT32"), m);
        }
    }

    @Test
    void aFittingOutputKeepsItsOwnShape() {
        List<long[]> shapes = Ranks.run(2, comm -> {
            Tensor out = Tensor.of(new long[4], 4);
            return comm.allgatherInto(Tensor.of(new long[]{comm.rank(), 7}, 1, 2), out).shape();
        });
        assertEquals(1, shapes.get(0).length);
        assertArrayEquals(new long[]{4}, shapes.get(1));
    }
}
