package io.kolo.bootstrap;

import org.junit.jupiter.api.Test;

import java.util.HashSet;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@link RandomBytes} fills what it is given, with bytes that do not repeat between calls. */
class RandomBytesTest {

    @Test
    void fillsEveryByteAndNoTwoFillsAreAlike() {
        Set<String> seen = new HashSet<>();
        int[] counts = new int[256];
        for (int i = 0; i < 200; i++) {
            byte[] b = new byte[32];
            RandomBytes.fill(b);
            assertTrue(seen.add(java.util.HexFormat.of().formatHex(b)), "a 32-byte fill came out twice");
            for (byte x : b) {
                counts[x & 0xff]++;
            }
        }
        // 6400 bytes: every value is expected 25 times; one that never comes up means bytes left unfilled or a bias.
        for (int v = 0; v < 256; v++) {
            assertTrue(counts[v] > 0, "byte value " + v + " never came up in 6400 random bytes");
        }
    }

    @Test
    void longsUseAllTheirBits() {
        Set<Long> seen = new HashSet<>();
        long or = 0;
        long and = -1;
        for (int i = 0; i < 100; i++) {
            long v = RandomBytes.nextLong();
            seen.add(v);
            or |= v;
            and &= v;
        }
        assertEquals(100, seen.size());
        assertEquals(-1L, or, "some bit was never set");
        assertEquals(0L, and, "some bit was always set");
    }

    @Test
    void anEmptyArrayIsFine() {
        byte[] none = new byte[0];
        RandomBytes.fill(none);
        assertFalse(none.length > 0);
    }
}
