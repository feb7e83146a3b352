package io.kolo.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Message sizes as users write them: {@code 1024}, {@code 8B}, {@code 64KiB}, {@code 4MiB}, {@code 1GiB};
 * ranges {@code 8B..256MiB} (doubling) or {@code 1KiB..1MiB:4} (times 4); comma-separated lists of either.
 */
public final class Sizes {
    /** Largest message: Kolo tensors and MPI counts are int-indexed. */
    public static final long MAX_BYTES = 1L << 30;
    public static final String DEFAULT = "8B..256MiB";
    private static final Pattern SIZE = Pattern.compile("(\\d+)\\s*([A-Za-z]*)");
    private static final Pattern RANGE = Pattern.compile("(.+)\\.\\.([^:]+)(?::(\\d+))?");

    private Sizes() {
    }

    /** Parses a size list; sorted ascending, duplicates removed. */
    public static long[] parse(String spec) {
        // ",," splits into nothing: as empty as "".
        if (spec == null || spec.isBlank() || spec.split(",").length == 0) {
            throw new IllegalArgumentException("--sizes is empty; use e.g. 8B..256MiB or 1KiB,4MiB");
        }
        List<Long> sizes = new ArrayList<>();
        for (String part : spec.split(",")) {
            String p = part.trim();
            Matcher range = RANGE.matcher(p);
            if (range.matches()) {
                long from = bytes(range.group(1).trim());
                long to = bytes(range.group(2).trim());
                long factor = range.group(3) == null ? 2 : Long.parseLong(range.group(3));
                if (from > to) {
                    throw new IllegalArgumentException("--sizes " + p + ": the range runs backwards ("
                            + format(from) + " > " + format(to) + ")");
                }
                if (factor < 2 || factor > 1024) {
                    throw new IllegalArgumentException("--sizes " + p + ": the step factor must be 2..1024, got " + factor);
                }
                for (long s = from; s <= to; s *= factor) {
                    sizes.add(s);
                }
            } else {
                sizes.add(bytes(p));
            }
        }
        return sizes.stream().mapToLong(Long::longValue).sorted().distinct().toArray();
    }

    /** One size: a number of bytes with an optional B, KiB, MiB or GiB (or K, M, G) suffix. */
    public static long bytes(String text) {
        Matcher m = SIZE.matcher(text.trim());
        if (!m.matches()) {
            throw new IllegalArgumentException("bad size '" + text + "'; use a number with B, KiB, MiB or GiB, e.g. 64KiB");
        }
        long unit = switch (m.group(2).toLowerCase(Locale.ROOT)) {
            case "", "b" -> 1;
            case "k", "kib" -> 1L << 10;
            case "m", "mib" -> 1L << 20;
            case "g", "gib" -> 1L << 30;
            case "kb", "mb", "gb" -> throw new IllegalArgumentException("bad size '" + text
                    + "': say KiB, MiB or GiB (powers of 1024), not " + m.group(2));
            default -> throw new IllegalArgumentException("bad size '" + text + "': unknown unit '" + m.group(2)
                    + "'; use B, KiB, MiB or GiB");
        };
        long value;
        try {
            value = Math.multiplyExact(Long.parseLong(m.group(1)), unit);
        } catch (ArithmeticException | NumberFormatException e) {
            throw new IllegalArgumentException("bad size '" + text + "': too large; at most " + format(MAX_BYTES));
        }
        if (value < 1 || value > MAX_BYTES) {
            throw new IllegalArgumentException("bad size '" + text + "': must be 1B.." + format(MAX_BYTES));
        }
        return value;
    }

    /** 1024 -> "1KiB", 1536 -> "1536B": exact, so a formatted size parses back to itself. */
    public static String format(long bytes) {
        String[] units = {"B", "KiB", "MiB", "GiB"};
        int u = 0;
        long v = bytes;
        while (u < units.length - 1 && v >= 1024 && v % 1024 == 0) {
            v /= 1024;
            u++;
        }
        return v + units[u];
    }
}
