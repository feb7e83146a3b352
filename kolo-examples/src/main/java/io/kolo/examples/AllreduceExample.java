package io.kolo.examples;

import io.kolo.Kolo;
import io.kolo.ReduceOp;
import io.kolo.Tensor;

import java.util.Arrays;
import java.util.Locale;

/**
 * The first distributed program: every rank contributes a vector, allreduce sums it, every rank checks the
 * result. Run it with {@code ./kolo run -np 4 --example allreduce -- --elements 1048576 --iterations 20}.
 */
public final class AllreduceExample {
    private AllreduceExample() {
    }

    public static void main(String[] args) {
        int elements = 1 << 20;
        int iterations = 10;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--elements" -> elements = Integer.parseInt(value(args, ++i, "--elements"));
                case "--iterations" -> iterations = Integer.parseInt(value(args, ++i, "--iterations"));
                case "-h", "--help" -> {
                    System.out.println("usage: allreduce [--elements N] [--iterations N]");
                    return;
                }
                default -> {
                    System.err.println("allreduce: unknown argument '" + args[i] + "' (try --help)");
                    System.exit(2);
                }
            }
        }
        Kolo.init();
        try {
            int rank = Kolo.rank();
            int size = Kolo.size();
            System.out.printf(Locale.ROOT, "rank %d of %d (local %d of %d, host %d of %d)%n", rank, size,
                    Kolo.localRank(), Kolo.localSize(), Kolo.crossRank(), Kolo.crossSize());

            float[] data = new float[elements];
            double expected = size * (size + 1) / 2.0;
            long totalNanos = 0;
            for (int it = 0; it < iterations; it++) {
                Arrays.fill(data, rank + 1);
                long start = System.nanoTime();
                // A name that repeats every step lets the response cache skip the coordinator after step one.
                Kolo.allreduceAsync("example.data", Tensor.of(data), ReduceOp.SUM).await();
                totalNanos += System.nanoTime() - start;
                for (float v : data) {
                    if (v != expected) {
                        throw new IllegalStateException("rank " + rank + ": allreduce gave " + v + ", expected " + expected);
                    }
                }
            }
            double ms = totalNanos / 1e6 / iterations;
            double bytes = 4.0 * elements;
            double busBandwidth = size > 1 ? 2.0 * (size - 1) / size * bytes / (ms / 1e3) / 1e9 : 0;
            float[] gathered = Kolo.allgather(new float[]{rank});
            float[] fromRoot = Kolo.broadcast(new float[]{rank == 0 ? 42 : -1}, 0);
            if (fromRoot[0] != 42) {
                throw new IllegalStateException("broadcast gave " + fromRoot[0]);
            }
            System.out.printf(Locale.ROOT, "allreduce of %d floats x %d: every element = %.0f (correct), %.3f ms avg, bus bandwidth %.2f GB/s%n",
                    elements, iterations, expected, ms, busBandwidth);
            if (rank == 0) {
                System.out.println("allgather of ranks: " + Arrays.toString(gathered));
            }
        } finally {
            Kolo.shutdown();
        }
    }

    private static String value(String[] args, int i, String flag) {
        if (i >= args.length) {
            System.err.println("allreduce: " + flag + " needs a value");
            System.exit(2);
        }
        return args[i];
    }
}
