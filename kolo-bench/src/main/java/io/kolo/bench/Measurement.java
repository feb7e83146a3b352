package io.kolo.bench;

import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * One message size measured by one implementation. Times are per operation in seconds: for each
 * iteration the slowest rank's time (the collective is done when the last rank is done), then the
 * average, minimum, median and maximum over the iterations.
 *
 * <p>Every implementation (the Kolo worker, the MPI C program, the Gloo Python script) reports a
 * measurement as one line, {@link #toLine()}, so the harness merges them without caring who produced it.
 */
public record Measurement(long bytes, int iterations, double avgSeconds, double minSeconds, double medianSeconds,
                          double maxSeconds) {
    /** Marks a result line among whatever else a peer prints. */
    public static final String PREFIX = "KOLO-BENCH-RESULT";

    /** Statistics of per-iteration times in nanoseconds (the array is sorted in place). */
    public static Measurement of(long bytes, long[] nanos, int count) {
        if (count < 1) {
            throw new IllegalArgumentException("no iterations measured for " + Sizes.format(bytes));
        }
        Arrays.sort(nanos, 0, count);
        double sum = 0;
        for (int i = 0; i < count; i++) {
            sum += nanos[i];
        }
        double median = count % 2 == 1 ? nanos[count / 2] : (nanos[count / 2 - 1] + nanos[count / 2]) / 2.0;
        return new Measurement(bytes, count, sum / count / 1e9, nanos[0] / 1e9, median / 1e9, nanos[count - 1] / 1e9);
    }

    /**
     * Slices of one size measured apart (see {@link SliceGate}) as one measurement: iterations added up, the average
     * weighted by them, the smallest minimum and largest maximum, and the median of the slices' medians (the
     * iterations themselves are not known; with slices of equal length that is close to their median).
     */
    public static Measurement merge(List<Measurement> slices) {
        if (slices.isEmpty()) {
            throw new IllegalArgumentException("no slices to merge");
        }
        long bytes = slices.getFirst().bytes();
        int iterations = 0;
        double weighted = 0;
        double min = Double.MAX_VALUE;
        double max = 0;
        double[] medians = new double[slices.size()];
        for (int i = 0; i < slices.size(); i++) {
            Measurement m = slices.get(i);
            if (m.bytes() != bytes) {
                throw new IllegalArgumentException("slices of different sizes: " + bytes + " and " + m.bytes());
            }
            iterations += m.iterations();
            weighted += m.avgSeconds() * m.iterations();
            min = Math.min(min, m.minSeconds());
            max = Math.max(max, m.maxSeconds());
            medians[i] = m.medianSeconds();
        }
        Arrays.sort(medians);
        int n = medians.length;
        double median = n % 2 == 1 ? medians[n / 2] : (medians[n / 2 - 1] + medians[n / 2]) / 2;
        return new Measurement(bytes, iterations, weighted / iterations, min, median, max);
    }

    /** Algorithm bandwidth in bytes per second: message bytes over the average time. */
    public double algBandwidth() {
        return avgSeconds > 0 ? bytes / avgSeconds : 0;
    }

    /** Bus bandwidth in bytes per second for this collective at {@code ranks} ranks. */
    public double busBandwidth(Collective collective, int ranks) {
        return algBandwidth() * collective.busFactor(ranks);
    }

    public String toLine() {
        return String.format(Locale.ROOT, "%s bytes=%d iters=%d avg_us=%.3f min_us=%.3f median_us=%.3f max_us=%.3f",
                PREFIX, bytes, iterations, avgSeconds * 1e6, minSeconds * 1e6, medianSeconds * 1e6, maxSeconds * 1e6);
    }

    /** The measurement on a result line, empty for any other line; a malformed result line is an error. */
    public static Optional<Measurement> parseLine(String line) {
        String trimmed = line.strip();
        if (!trimmed.startsWith(PREFIX + " ")) {
            return Optional.empty();
        }
        Map<String, String> fields = new HashMap<>();
        for (String kv : trimmed.substring(PREFIX.length()).trim().split("\\s+")) {
            int eq = kv.indexOf('=');
            if (eq > 0) {
                fields.put(kv.substring(0, eq), kv.substring(eq + 1));
            }
        }
        try {
            return Optional.of(new Measurement(Long.parseLong(field(fields, "bytes", line)),
                    Integer.parseInt(field(fields, "iters", line)),
                    Double.parseDouble(field(fields, "avg_us", line)) / 1e6,
                    Double.parseDouble(field(fields, "min_us", line)) / 1e6,
                    Double.parseDouble(field(fields, "median_us", line)) / 1e6,
                    Double.parseDouble(field(fields, "max_us", line)) / 1e6));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("malformed result line '" + trimmed + "': " + e.getMessage());
        }
    }

    private static String field(Map<String, String> fields, String name, String line) {
        String v = fields.get(name);
        if (v == null) {
            throw new IllegalArgumentException("result line without " + name + ": '" + line.strip() + "'");
        }
        return v;
    }
}
