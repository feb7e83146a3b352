package io.kolo.examples;

import org.junit.jupiter.api.Test;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The examples' flag values: a bad one is a message naming the flag and the value, as before picocli parsed them. */
class ExampleArgsTest {
    @Command(name = "test")
    static final class Options {
        @Option(names = "--elements", converter = ExampleArgs.Positive.class)
        int elements = 7;
        @Option(names = "--warmup", converter = ExampleArgs.NonNegative.class)
        int warmup = 5;
        @Option(names = "--seed", converter = ExampleArgs.Whole.class)
        long seed;
        @Option(names = "--lr", converter = ExampleArgs.PositiveNumber.class)
        float lr = 1;
        @Option(names = "--name")
        String name;
        @Option(names = "--flag")
        boolean flag;
        @Option(names = {"-h", "--help"}, usageHelp = true)
        boolean help;
    }

    private static String refused(String... args) {
        return assertThrows(IllegalArgumentException.class, () -> ExampleArgs.parse(new Options(), args)).getMessage();
    }

    private static Options parsed(String... args) {
        Options o = new Options();
        assertFalse(ExampleArgs.parse(o, args));
        return o;
    }

    @Test
    void wholeNumbersWithALowerBound() {
        assertEquals("--elements needs a whole number >= 1, not '-5'", refused("--elements", "-5"));
        assertEquals("--elements needs a whole number >= 1, not '0'", refused("--elements", "0"));
        assertEquals("--elements needs a whole number >= 1, not '3000000000'", refused("--elements", "3000000000"));
        assertEquals(0, parsed("--warmup", "0").warmup);
        assertEquals("--warmup needs a whole number >= 0, not 'x'", refused("--warmup", "x"));
        assertEquals(3000000000L, parsed("--seed", "3000000000").seed);
        assertEquals(-3, parsed("--seed", "-3").seed);
        assertEquals("--seed needs a whole number, not 'x'", refused("--seed", "x"));
    }

    @Test
    void positiveNumbers() {
        assertEquals(0.05f, parsed("--lr", "0.05").lr);
        for (String bad : new String[]{"0", "NaN", "1e40", "fast", "-1"}) {
            assertEquals("--lr needs a number > 0, not '" + bad + "'", refused("--lr", bad));
        }
    }

    @Test
    void aFlagAtTheEndNeedsItsValueAndAnUnknownOneIsNamed() {
        assertEquals("--elements needs a value", refused("--elements"));
        assertEquals("unknown argument '--elemnts'", refused("--elemnts", "3"));
        assertEquals("unknown argument 'extra'", refused("extra"));
    }

    @Test
    void defaultsFlagsAndHelp() {
        Options o = parsed("--name", "a b", "--flag");
        assertEquals(7, o.elements);
        assertEquals("a b", o.name);
        assertTrue(o.flag);
        assertTrue(ExampleArgs.parse(new Options(), new String[]{"--help"}));
        assertTrue(ExampleArgs.parse(new Options(), new String[]{"-h"}));
    }
}
