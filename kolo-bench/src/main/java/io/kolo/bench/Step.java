package io.kolo.bench;

import java.util.ArrayList;
import java.util.List;

/**
 * What to run at one message size: its bytes, the warm-up and the measured iterations. Every implementation
 * gets the same steps, written {@code bytes:iters:warmup,...}, so their rows line up size for size.
 */
public record Step(long bytes, int iterations, int warmup) {
    /**
     * Bytes moved per size by default: enough repetitions for a stable median, a few seconds at most per size. Small
     * messages repeat up to 2,000 times: at a few microseconds per op, one descheduled iteration (milliseconds on a
     * busy machine) would otherwise move a 200-iteration average by tens of percent.
     */
    static final long BYTES_PER_SIZE = 512L << 20;
    static final int MIN_ITERATIONS = 5;
    static final int MAX_ITERATIONS = 2_000;

    public Step {
        if (bytes < 1 || iterations < 1 || warmup < 0) {
            throw new IllegalArgumentException("bad step " + bytes + ":" + iterations + ":" + warmup);
        }
    }

    /**
     * The steps for these sizes. {@code iterations} or {@code warmup} below 0 mean "scale by size": small
     * messages repeat up to 2,000 times, large ones down to 5, so the default 8B..256MiB run takes seconds
     * per size rather than minutes. The first size warms up longer because the JIT is still compiling.
     */
    public static List<Step> plan(long[] effectiveSizes, int iterations, int warmup) {
        List<Step> steps = new ArrayList<>();
        for (int i = 0; i < effectiveSizes.length; i++) {
            long bytes = effectiveSizes[i];
            int iters = iterations > 0 ? iterations
                    : (int) Math.max(MIN_ITERATIONS, Math.min(MAX_ITERATIONS, BYTES_PER_SIZE / bytes));
            int warm = warmup >= 0 ? warmup : Math.max(2, iters / 5) + (i == 0 ? 50 : 0);
            steps.add(new Step(bytes, iters, warm));
        }
        return steps;
    }

    public static String format(List<Step> steps) {
        StringBuilder sb = new StringBuilder();
        for (Step s : steps) {
            if (!sb.isEmpty()) {
                sb.append(',');
            }
            sb.append(s.bytes).append(':').append(s.iterations).append(':').append(s.warmup);
        }
        return sb.toString();
    }

    public static List<Step> parse(String text) {
        List<Step> steps = new ArrayList<>();
        for (String part : text.split(",")) {
            String[] f = part.trim().split(":");
            if (f.length != 3) {
                throw new IllegalArgumentException("bad step '" + part + "': expected bytes:iterations:warmup");
            }
            try {
                steps.add(new Step(Long.parseLong(f[0]), Integer.parseInt(f[1]), Integer.parseInt(f[2])));
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("bad step '" + part + "': expected bytes:iterations:warmup");
            }
        }
        return steps;
    }
}
