package io.kolo.examples;

import picocli.CommandLine;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.TypeConversionException;

/**
 * The examples' command lines, parsed by picocli into an options object. A bad one is an IllegalArgumentException
 * whose message names the flag and what it needs ({@code --epochs needs a whole number >= 1, not '0'}), which each
 * example prints as one line with its usage.
 */
final class ExampleArgs {
    static {
        // As in the launcher: picocli's factory looks for Groovy's closure class on every start, an exception that
        // costs a starting rank time for nothing (the examples' options hold no closures).
        System.setProperty("picocli.disable.closures", "true");
    }

    private ExampleArgs() {
    }

    /** Fills {@code options} (a picocli {@code @Command}) from {@code args}; true when help was asked for. */
    static boolean parse(Object options, String[] args) {
        CommandLine cli = new CommandLine(options);
        try {
            return cli.parseArgs(args).isUsageHelpRequested();
        } catch (CommandLine.UnmatchedArgumentException e) {
            throw new IllegalArgumentException("unknown argument '" + e.getUnmatched().getFirst() + "'");
        } catch (CommandLine.MissingParameterException e) {
            if (!e.getMissing().isEmpty() && e.getMissing().getFirst() instanceof OptionSpec option) {
                throw new IllegalArgumentException(option.longestName() + " needs a value");
            }
            throw new IllegalArgumentException(e.getMessage());
        } catch (CommandLine.ParameterException e) {
            if (e.getArgSpec() instanceof OptionSpec option && e.getCause() instanceof TypeConversionException bad) {
                throw new IllegalArgumentException(option.longestName() + " " + bad.getMessage());
            }
            throw new IllegalArgumentException(e.getMessage());
        }
    }

    /** A whole number >= 1. */
    static final class Positive implements ITypeConverter<Integer> {
        @Override
        public Integer convert(String v) {
            return atLeast(v, 1);
        }
    }

    /** A whole number >= 0. */
    static final class NonNegative implements ITypeConverter<Integer> {
        @Override
        public Integer convert(String v) {
            return atLeast(v, 0);
        }
    }

    /** A whole number of any sign. */
    static final class Whole implements ITypeConverter<Long> {
        @Override
        public Long convert(String v) {
            try {
                return Long.parseLong(v);
            } catch (NumberFormatException e) {
                throw new TypeConversionException("needs a whole number, not '" + v + "'");
            }
        }
    }

    /** A finite number > 0. */
    static final class PositiveNumber implements ITypeConverter<Float> {
        @Override
        public Float convert(String v) {
            try {
                float f = Float.parseFloat(v);
                if (f > 0 && Float.isFinite(f)) {
                    return f;
                }
            } catch (NumberFormatException ignored) {
                // reported below
            }
            throw new TypeConversionException("needs a number > 0, not '" + v + "'");
        }
    }

    private static int atLeast(String v, int min) {
        try {
            int n = Integer.parseInt(v);
            if (n >= min) {
                return n;
            }
        } catch (NumberFormatException ignored) {
            // reported below
        }
        throw new TypeConversionException("needs a whole number >= " + min + ", not '" + v + "'");
    }
}
