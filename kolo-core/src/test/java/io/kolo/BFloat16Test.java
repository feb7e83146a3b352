package io.kolo;

import org.junit.jupiter.api.Test;

import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class BFloat16Test {

    @Test
    void everyNonNanBitPatternRoundTripsExactly() {
        for (int b = 0; b < 0x10000; b++) {
            short bits = (short) b;
            float f = BFloat16.toFloat(bits);
            assertEquals(Float.floatToRawIntBits(f) >>> 16, b);
            if (!Float.isNaN(f)) {
                assertEquals(bits, BFloat16.fromFloat(f), "pattern " + Integer.toHexString(b));
            }
        }
    }

    @Test
    void roundsToNearestWithTiesToEven() {
        assertEquals((short) 0x3F80, BFloat16.fromFloat(Float.intBitsToFloat(0x3F80_8000)), "tie, even below");
        assertEquals((short) 0x3F82, BFloat16.fromFloat(Float.intBitsToFloat(0x3F81_8000)), "tie, even above");
        assertEquals((short) 0x3F81, BFloat16.fromFloat(Float.intBitsToFloat(0x3F80_8001)), "just above the tie");
        assertEquals((short) 0x3F80, BFloat16.fromFloat(Float.intBitsToFloat(0x3F80_7FFF)), "just below the tie");
        assertEquals((short) 0xBF82, BFloat16.fromFloat(Float.intBitsToFloat(0xBF81_8000)), "negative tie");
        assertEquals(256f, BFloat16.toFloat(BFloat16.fromFloat(257f)), "257 is a tie between 256 and 258");
        assertEquals(3.140625f, BFloat16.toFloat(BFloat16.fromFloat(3.14159f)));
    }

    @Test
    void matchesAReferenceRoundingOnRandomFloats() {
        SplittableRandom r = new SplittableRandom(7);
        for (int k = 0; k < 200_000; k++) {
            float f = Float.intBitsToFloat(r.nextInt());
            if (Float.isNaN(f) || Float.isInfinite(f)) {
                continue;
            }
            int bits = Float.floatToRawIntBits(f);
            int lo = bits & 0xFFFF_0000;
            int hi = lo + 0x1_0000;
            double dLo = Math.abs((double) f - Float.intBitsToFloat(lo));
            // Past the largest finite value, IEEE rounding treats infinity as sitting one ulp further out.
            double hiValue = Float.isInfinite(Float.intBitsToFloat(hi)) ? Math.copySign(0x1p128, f)
                    : Float.intBitsToFloat(hi);
            double dHi = Math.abs(hiValue - f);
            int expected = dLo < dHi ? lo : dHi < dLo ? hi : ((lo >>> 16) & 1) == 0 ? lo : hi;
            if (Float.isNaN(Float.intBitsToFloat(hi))) {
                continue;
            }
            assertEquals((short) (expected >>> 16), BFloat16.fromFloat(f), "for " + f);
        }
    }

    @Test
    void overflowBecomesInfinityAndNanStaysNan() {
        assertEquals((short) 0x7F80, BFloat16.fromFloat(Float.MAX_VALUE));
        assertEquals((short) 0xFF80, BFloat16.fromFloat(-Float.MAX_VALUE));
        assertEquals((short) 0x7F80, BFloat16.fromFloat(Float.POSITIVE_INFINITY));
        // A NaN whose payload sits only in the low half must not truncate to infinity.
        short lowPayload = BFloat16.fromFloat(Float.intBitsToFloat(0x7F80_0001));
        assertTrue(Float.isNaN(BFloat16.toFloat(lowPayload)));
        short negative = BFloat16.fromFloat(Float.intBitsToFloat(0xFFC1_2345));
        assertTrue(Float.isNaN(BFloat16.toFloat(negative)));
        assertEquals((short) 0xFFC1, negative, "sign and top payload preserved");
    }
}
