package io.kolo.examples;

import io.kolo.Kolo;
import io.kolo.ReduceOp;
import io.kolo.Tensor;

import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.util.Arrays;
import java.util.Locale;

/**
 * The first distributed program: every rank contributes a vector, allreduce sums it, every rank checks the
 * result. Run it with {@code ./kolo run -np 4 --example allreduce -- --elements 1048576 --iterations 60}.
 *
 * <p>Rank 0 reports the first op, the rest of the first {@value #FIRST_OPS} and the steady state apart: a JVM runs new
 * code slowly until it has compiled it, and the first op also meets every peer for the first time, so an average
 * over all ops says little about either.
 */
public final class AllreduceExample {
    /** The ops reported as the start; the ones after them are the steady state. */
    static final int FIRST_OPS = 10;
    private static final String USAGE = "usage: allreduce [--elements N] [--iterations N] [--startup]";

    private AllreduceExample() {
    }

    @Command(name = "allreduce")
    static final class Options {
        @Option(names = "--elements", converter = ExampleArgs.Positive.class)
        int elements = 1 << 20;
        @Option(names = "--iterations", converter = ExampleArgs.Positive.class)
        int iterations = 60;
        @Option(names = "--startup")
        boolean startup;
        @Option(names = {"-h", "--help"}, usageHelp = true)
        boolean help;
    }

    public static void main(String[] args) {
        long mainAt = System.currentTimeMillis();
        Options options = new Options();
        try {
            if (ExampleArgs.parse(options, args)) {
                System.out.println(USAGE);
                return;
            }
        } catch (IllegalArgumentException e) {
            System.err.println("allreduce: " + e.getMessage() + " (" + USAGE + ")");
            System.exit(2);
            return;
        }
        int elements = options.elements;
        int iterations = options.iterations;
        boolean startup = options.startup;
        Kolo.init();
        long initDone = System.currentTimeMillis();
        long firstOpDone = 0;
        int rank = -1;
        try {
            rank = Kolo.rank();
            int size = Kolo.size();
            System.out.printf(Locale.ROOT, "rank %d of %d (local %d of %d, host %d of %d)%n", rank, size,
                    Kolo.localRank(), Kolo.localSize(), Kolo.crossRank(), Kolo.crossSize());

            float[] data = new float[elements];
            double expected = size * (size + 1) / 2.0;
            long[] nanos = new long[iterations];
            for (int it = 0; it < iterations; it++) {
                Arrays.fill(data, rank + 1);
                long start = System.nanoTime();
                // A name that repeats every step lets the response cache skip the coordinator after step one.
                Kolo.allreduceAsync("example.data", Tensor.of(data), ReduceOp.SUM).await();
                nanos[it] = System.nanoTime() - start;
                if (it == 0) {
                    firstOpDone = System.currentTimeMillis();
                }
                for (float v : data) {
                    if (v != expected) {
                        throw new IllegalStateException("rank " + rank + ": allreduce gave " + v + ", expected " + expected);
                    }
                }
            }
            float[] gathered = Kolo.allgather(new float[]{rank});
            float[] fromRoot = Kolo.broadcast(new float[]{rank == 0 ? 42 : -1}, 0);
            if (fromRoot[0] != 42) {
                throw new IllegalStateException("broadcast gave " + fromRoot[0]);
            }
            System.out.printf(Locale.ROOT, "allreduce of %d floats x %d: every element = %.0f (correct)%n",
                    elements, iterations, expected);
            if (rank == 0) {
                System.out.println(timings(nanos, 4.0 * elements, size));
                System.out.println("allgather of ranks: " + Arrays.toString(gathered));
            }
        } finally {
            Kolo.shutdown();
        }
        if (startup && rank == 0) {
            System.out.println(startupLine(mainAt, initDone, firstOpDone, System.currentTimeMillis()));
        }
    }

    /**
     * When each phase of rank 0's start ended, from the JVM's own start (recorded as it began, before any class was
     * loaded): kolo-bench/scripts/first-run.sh adds the launcher's part from the absolute start.
     */
    static String startupLine(long mainAt, long initDone, long firstOpDone, long end) {
        long jvm = java.lang.management.ManagementFactory.getRuntimeMXBean().getStartTime();
        return String.format(Locale.ROOT, "startup: JVM started at %d (epoch ms); main +%d ms, Kolo.init done +%d ms,"
                + " first op done +%d ms, shutdown done +%d ms", jvm, mainAt - jvm, initDone - jvm, firstOpDone - jvm,
                end - jvm);
    }

    /**
     * One line: the first op, the average of the rest of the first {@value #FIRST_OPS}, and the steady state's average
     * and bus bandwidth (as {@code kolo bench} computes it) — the start and the steady state apart, see the class comment.
     */
    static String timings(long[] nanos, double bytes, int size) {
        StringBuilder line = new StringBuilder(String.format(Locale.ROOT, "first op %.1f ms", nanos[0] / 1e6));
        int firstOps = Math.min(FIRST_OPS, nanos.length);
        if (firstOps > 1) {
            line.append(String.format(Locale.ROOT, ", ops 2-%d %.1f ms avg", firstOps, average(nanos, 1, firstOps)));
        }
        if (nanos.length > FIRST_OPS) {
            double ms = average(nanos, FIRST_OPS, nanos.length);
            line.append(String.format(Locale.ROOT, "; steady state (ops %d-%d) %.2f ms avg", FIRST_OPS + 1,
                    nanos.length, ms));
            if (size > 1) {
                line.append(String.format(Locale.ROOT, ", bus bandwidth %.2f GB/s",
                        2.0 * (size - 1) / size * bytes / (ms / 1e3) / 1e9));
            }
        } else {
            line.append(String.format(Locale.ROOT, " (more than %d --iterations for the steady state)", FIRST_OPS));
        }
        return line.toString();
    }

    private static double average(long[] nanos, int from, int to) {
        long sum = 0;
        for (int i = from; i < to; i++) {
            sum += nanos[i];
        }
        return sum / 1e6 / (to - from);
    }
}
