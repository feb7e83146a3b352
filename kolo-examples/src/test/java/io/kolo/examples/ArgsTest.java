package io.kolo.examples;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** The examples' flag values: a bad one is a message naming the flag and the value. */
class ArgsTest {

    private static String refused(Runnable r) {
        return assertThrows(IllegalArgumentException.class, r::run).getMessage();
    }

    @Test
    void wholeNumbersWithALowerBound() {
        String[] args = {"--elements", "-5", "--warmup", "0", "--n", "x", "--big", "3000000000"};
        assertEquals("--elements needs a whole number >= 1, not '-5'", refused(() -> Args.positive(args, 1)));
        assertEquals(0, Args.atLeast(args, 3, 0));
        assertEquals("--warmup needs a whole number >= 1, not '0'", refused(() -> Args.positive(args, 3)));
        assertEquals("--n needs a whole number >= 0, not 'x'", refused(() -> Args.atLeast(args, 5, 0)));
        assertEquals("--big needs a whole number >= 1, not '3000000000'", refused(() -> Args.positive(args, 7)));
        assertEquals(3000000000L, Args.whole(args, 7));
        assertEquals("--n needs a whole number, not 'x'", refused(() -> Args.whole(args, 5)));
    }

    @Test
    void positiveNumbers() {
        String[] args = {"--lr", "0.05", "--lr", "0", "--lr", "NaN", "--lr", "1e40", "--lr", "fast"};
        assertEquals(0.05f, Args.positiveNumber(args, 1));
        for (int i : new int[]{3, 5, 7, 9}) {
            assertEquals("--lr needs a number > 0, not '" + args[i] + "'", refused(() -> Args.positiveNumber(args, i)));
        }
    }

    @Test
    void aFlagAtTheEndNeedsItsValue() {
        String[] args = {"--iterations"};
        assertEquals("--iterations needs a value", refused(() -> Args.positive(args, 1)));
    }
}
