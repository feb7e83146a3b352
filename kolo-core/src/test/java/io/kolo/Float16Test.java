package io.kolo;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class Float16Test {

    @Test
    void everyNonNanBitPatternRoundTripsExactly() {
        for (int b = 0; b < 0x10000; b++) {
            short bits = (short) b;
            float f = Float16.toFloat(bits);
            if (Float.isNaN(f)) {
                assertTrue(Float.isNaN(Float16.toFloat(Float16.fromFloat(f))));
            } else {
                assertEquals(bits, Float16.fromFloat(f), "pattern " + Integer.toHexString(b));
            }
        }
    }

    @Test
    void knownValuesAndRounding() {
        assertEquals((short) 0x3C00, Float16.fromFloat(1f));
        assertEquals((short) 0xC000, Float16.fromFloat(-2f));
        assertEquals(65504f, Float16.toFloat((short) 0x7BFF), "largest finite half");
        assertEquals((short) 0x7C00, Float16.fromFloat(70000f), "overflow to infinity");
        assertEquals(2048f, Float16.toFloat(Float16.fromFloat(2049f)), "tie rounds to even");
        assertEquals(2052f, Float16.toFloat(Float16.fromFloat(2051f)), "tie rounds to even");
        assertEquals(0x1p-24f, Float16.toFloat((short) 1), "smallest subnormal");
    }
}
