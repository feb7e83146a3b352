package io.kolo.examples;

/** The examples' command-line values: each throws IllegalArgumentException naming the flag when a value is bad. */
final class Args {
    private Args() {
    }

    /** The value after the flag at {@code i - 1}. */
    static String value(String[] args, int i) {
        if (i >= args.length) {
            throw new IllegalArgumentException(args[i - 1] + " needs a value");
        }
        return args[i];
    }

    /** The whole number >= 1 after the flag at {@code i - 1}. */
    static int positive(String[] args, int i) {
        return atLeast(args, i, 1);
    }

    /** The whole number >= {@code min} after the flag at {@code i - 1}. */
    static int atLeast(String[] args, int i, int min) {
        String v = value(args, i);
        try {
            int n = Integer.parseInt(v);
            if (n >= min) {
                return n;
            }
        } catch (NumberFormatException ignored) {
            // reported below
        }
        throw new IllegalArgumentException(args[i - 1] + " needs a whole number >= " + min + ", not '" + v + "'");
    }

    /** The whole number (any sign) after the flag at {@code i - 1}. */
    static long whole(String[] args, int i) {
        String v = value(args, i);
        try {
            return Long.parseLong(v);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(args[i - 1] + " needs a whole number, not '" + v + "'");
        }
    }

    /** The finite number > 0 after the flag at {@code i - 1}. */
    static float positiveNumber(String[] args, int i) {
        String v = value(args, i);
        try {
            float f = Float.parseFloat(v);
            if (f > 0 && Float.isFinite(f)) {
                return f;
            }
        } catch (NumberFormatException ignored) {
            // reported below
        }
        throw new IllegalArgumentException(args[i - 1] + " needs a number > 0, not '" + v + "'");
    }
}
