package io.kolo;

import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.Locale;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The engine's own work per op: a repeated, named 8-byte allreduce on one rank (no transport, nothing to wait for),
 * submitted and awaited as a training loop does. Prints the fastest and the median of ten rounds of a million ops
 * (after four rounds of warm-up) and asserts nothing about them; runs only with {@code -Dkolo.bench=true}:
 * <pre>./mvnw -o -q -pl kolo-core test -Dtest=EngineBenchTest -Dsurefire.failIfNoSpecifiedTests=false -Dkolo.bench=true</pre>
 */
class EngineBenchTest {

    @Test
    void printPerOpTime() {
        assumeTrue(Boolean.getBoolean("kolo.bench"), "timings run only with -Dkolo.bench=true");
        try (Arena arena = Arena.ofShared(); Communicator c = Communicator.local(1).getFirst()) {
            MemorySegment m = arena.allocate(8, 8);
            Tensor t = Tensor.of(m, DataType.FLOAT32, 2);
            double[] us = new double[14];
            for (int round = 0; round < us.length; round++) {
                int n = 1_000_000;
                long start = System.nanoTime();
                for (int i = 0; i < n; i++) {
                    c.allreduceAsync("engine.bench", t, ReduceOp.SUM).await();
                }
                us[round] = (System.nanoTime() - start) / 1e3 / n;
            }
            double[] measured = Arrays.copyOfRange(us, 4, us.length);
            Arrays.sort(measured);
            System.out.printf(Locale.ROOT, "engine, 1 rank, 8-byte allreduce: fastest round %.3f us per op, median %.3f%n",
                    measured[0], measured[measured.length / 2]);
        }
    }
}
