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
        String v = value(args, i);
        try {
            int n = Integer.parseInt(v);
            if (n >= 1) {
                return n;
            }
        } catch (NumberFormatException ignored) {
            // reported below
        }
        throw new IllegalArgumentException(args[i - 1] + " needs a whole number >= 1, not '" + v + "'");
    }
}
