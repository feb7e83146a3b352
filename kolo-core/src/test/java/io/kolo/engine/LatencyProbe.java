package io.kolo.engine;

import io.kolo.Kolo;
import io.kolo.ReduceOp;
import io.kolo.Tensor;

import java.util.Arrays;
import java.util.Locale;

/**
 * A measuring aid for engine work, not a test: per-op allreduce times after a warm-up, as percentiles, which
 * stay readable on a shared, noisy machine where a mean does not. Run from the repository root after
 * {@code ./mvnw -o -q -pl kolo-core -am test-compile}:
 * {@code ./kolo run -np 2 -cp kolo-core/target/classes:kolo-core/target/test-classes io.kolo.engine.LatencyProbe 1024 20000 5000}
 * (elements, measured iterations, warm-up iterations; add "native" for an off-heap tensor).
 */
public final class LatencyProbe {
    private LatencyProbe() {
    }

    /** CPU time of this process's engine thread: less disturbed by other load than wall time. */
    private static long engineCpuNanos() {
        var bean = java.lang.management.ManagementFactory.getThreadMXBean();
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.getName().startsWith("kolo-engine-")) {
                return bean.getThreadCpuTime(t.threadId());
            }
        }
        return 0;
    }

    public static void main(String[] args) {
        int elements = args.length > 0 ? Integer.parseInt(args[0]) : 1024;
        int iterations = args.length > 1 ? Integer.parseInt(args[1]) : 10000;
        int warmup = args.length > 2 ? Integer.parseInt(args[2]) : 2000;
        boolean offHeap = args.length > 3 && args[3].equals("native");
        Kolo.init();
        try {
            float[] data = new float[elements];
            Tensor t = offHeap ? Tensor.of(java.lang.foreign.Arena.global().allocate(4L * elements, 64),
                    io.kolo.DataType.FLOAT32, elements) : Tensor.of(data);
            long[] nanos = new long[iterations];
            long first = 0;
            long cpu0 = 0;
            for (int it = -warmup; it < iterations; it++) {
                if (it == 0) {
                    cpu0 = engineCpuNanos();
                }
                long start = System.nanoTime();
                Kolo.allreduceAsync("probe", t, ReduceOp.SUM).await();
                long d = System.nanoTime() - start;
                if (it >= 0) {
                    nanos[it] = d;
                } else {
                    first += d;
                }
            }
            double engineCpu = (engineCpuNanos() - cpu0) / 1e3 / iterations;
            Arrays.sort(nanos);
            double p50 = nanos[iterations / 2] / 1e3;
            double bus = 2.0 * (Kolo.size() - 1) / Kolo.size() * 4.0 * elements / (p50 / 1e6) / 1e9;
            long sum = 0;
            for (long n : nanos) {
                sum += n;
            }
            System.out.printf(Locale.ROOT, "rank %d %s %d B: warm-up %d ops %.1f ms; then us p10 %.1f p50 %.1f p90 %.1f"
                            + " mean %.1f; bus GB/s at p50 %.2f; engine thread CPU us/op %.1f%n", Kolo.rank(), offHeap ? "native" : "heap",
                    4L * elements, warmup, first / 1e6, nanos[iterations / 10] / 1e3, p50,
                    nanos[iterations * 9 / 10] / 1e3, sum / 1e3 / iterations, bus, engineCpu);
        } finally {
            Kolo.shutdown();
        }
    }
}
