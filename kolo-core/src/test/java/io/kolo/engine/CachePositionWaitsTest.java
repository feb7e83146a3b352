package io.kolo.engine;

import io.kolo.DataType;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

class CachePositionWaitsTest {

    private static Op op(String name) {
        return Op.of(OpKind.ALLREDUCE, name, DataType.FLOAT32, new long[]{1}, MemorySegment.ofArray(new float[1]));
    }

    private static List<Integer> positions(CachePositionWaits parked) {
        List<Integer> out = new ArrayList<>();
        for (int p = parked.next(0); p >= 0; p = parked.next(p + 1)) {
            out.add(p);
        }
        return out;
    }

    @Test
    void visitsExactlyTheParkedPositionsAcrossWords() {
        CachePositionWaits parked = new CachePositionWaits(200);
        assertTrue(parked.isEmpty());
        assertEquals(-1, parked.next(0));
        int[] at = {0, 63, 64, 127, 130, 199};
        for (int p : at) {
            parked.park(p, op("t" + p));
        }
        assertEquals(List.of(0, 63, 64, 127, 130, 199), positions(parked));
        assertEquals(1L | 1L << 63, parked.word(0));
        assertEquals(1L | 1L << 63, parked.word(1));
        assertEquals(1L << (130 - 128), parked.word(2));
        assertEquals(1L << (199 - 192), parked.word(3));
        assertEquals(-1, parked.next(200));
    }

    @Test
    void removingWhileVisitingKeepsTheRest() {
        CachePositionWaits parked = new CachePositionWaits(130);
        Op a = op("a");
        Op b = op("b");
        Op c = op("c");
        parked.park(5, a);
        parked.park(70, b);
        parked.park(129, c);
        for (int p = parked.next(0); p >= 0; p = parked.next(p + 1)) {
            if (p == 70) {
                assertSame(b, parked.remove(p));
            }
        }
        assertEquals(List.of(5, 129), positions(parked));
        assertNull(parked.remove(70));
        parked.remove(c);
        assertEquals(List.of(5), positions(parked));
        assertEquals(0, parked.word(2));
        parked.park(5, b);   // replacing keeps one op per position
        assertSame(b, parked.get(5));
        assertSame(b, parked.remove(5));
        assertTrue(parked.isEmpty());
        parked.park(1, a);
        parked.clear();
        assertTrue(parked.isEmpty());
        assertEquals(-1, parked.next(0));
    }

    @Test
    void positionsParkedAfterTheSetEmptiedAreFoundInEveryWord() {
        CachePositionWaits parked = new CachePositionWaits(256);
        Op a = op("a");
        Op b = op("b");
        parked.park(199, a);
        assertSame(a, parked.remove(199));
        assertEquals(List.of(), positions(parked));
        parked.park(3, a);
        assertEquals(List.of(3), positions(parked));
        parked.park(150, b);
        assertEquals(List.of(3, 150), positions(parked));
        parked.remove(a);
        assertEquals(List.of(150), positions(parked));
        assertEquals(150, parked.next(0));
    }
}
