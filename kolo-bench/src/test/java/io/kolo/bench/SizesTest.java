package io.kolo.bench;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class SizesTest {
    @Test
    void unitsArePowersOf1024() {
        assertEquals(8, Sizes.bytes("8B"));
        assertEquals(1000, Sizes.bytes("1000"));
        assertEquals(64 * 1024, Sizes.bytes("64KiB"));
        assertEquals(4L << 20, Sizes.bytes("4MiB"));
        assertEquals(4L << 20, Sizes.bytes("4m"));
        assertEquals(1L << 30, Sizes.bytes("1GiB"));
    }

    @Test
    void defaultRangeDoublesFrom8BytesTo256MiB() {
        long[] sizes = Sizes.parse(Sizes.DEFAULT);
        assertEquals(26, sizes.length);
        assertEquals(8, sizes[0]);
        assertEquals(256L << 20, sizes[25]);
        for (int i = 1; i < sizes.length; i++) {
            assertEquals(2 * sizes[i - 1], sizes[i]);
        }
    }

    @Test
    void rangesWithAFactorAndListsAreSortedWithoutDuplicates() {
        assertArrayEquals(new long[] {1024, 4096, 16384, 65536}, Sizes.parse("1KiB..64KiB:4"));
        assertArrayEquals(new long[] {8, 1024, 4L << 20}, Sizes.parse("4MiB, 1KiB,8B,1KiB"));
        assertArrayEquals(new long[] {3}, Sizes.parse("3B..5B"));
    }

    @Test
    void formatIsExactAndParsesBack() {
        assertEquals("1KiB", Sizes.format(1024));
        assertEquals("1536B", Sizes.format(1536));
        assertEquals("256MiB", Sizes.format(256L << 20));
        for (long s : Sizes.parse("1B..1GiB")) {
            assertEquals(s, Sizes.bytes(Sizes.format(s)));
        }
    }

    @Test
    void badSizesSayWhatIsWrong() {
        assertTrue(assertThrows(IllegalArgumentException.class, () -> Sizes.bytes("4MB")).getMessage()
                .contains("MiB"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> Sizes.bytes("12 parsecs")).getMessage()
                .contains("unknown unit"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> Sizes.bytes("0")).getMessage()
                .contains("1B.."));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> Sizes.bytes("2GiB")).getMessage()
                .contains("1GiB"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> Sizes.bytes("99999999999999999999"))
                .getMessage().contains("too large"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> Sizes.parse("1MiB..1KiB")).getMessage()
                .contains("backwards"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> Sizes.parse("1KiB..1MiB:1")).getMessage()
                .contains("factor"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> Sizes.parse(" ")).getMessage()
                .contains("empty"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> Sizes.parse("abc")).getMessage()
                .contains("'abc'"));
    }
}
