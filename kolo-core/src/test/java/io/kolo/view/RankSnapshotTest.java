package io.kolo.view;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A snapshot survives its trip through the store field by field, and a damaged or foreign one is refused. */
class RankSnapshotTest {
    private static RankSnapshot rankZero() {
        List<RankSnapshot.Point> points = new ArrayList<>();
        for (int i = 0; i < RankSnapshot.MAX_POINTS; i++) {
            points.add(new RankSnapshot.Point(1000 + i, i % 3 == 0 ? "loss" : i % 3 == 1 ? "accuracy" : "samples/s",
                    i * 0.5 - 3.25, i % 2 == 0 ? i / 2 : -1, 1_796_000_000_000L + i));
        }
        return new RankSnapshot(0, 3, "node-a.example", 4242L, 2, 1_796_000_001_234L, 12345L, 987_654_321L,
                1L << 40, "grad.12 ü", 1_796_000_001_200L, new long[]{0, 5_000_000L, 123_456_789L},
                new long[]{0, 7, 80}, List.of(new RankSnapshot.Stall("grad.3", new int[]{2}, 31.5),
                new RankSnapshot.Stall("loss", new int[]{1, 2}, 0.25)), 1, points);
    }

    private static void assertSame(RankSnapshot want, RankSnapshot got) {
        assertEquals(want.rank(), got.rank());
        assertEquals(want.size(), got.size());
        assertEquals(want.host(), got.host());
        assertEquals(want.pid(), got.pid());
        assertEquals(want.generation(), got.generation());
        assertEquals(want.timeMillis(), got.timeMillis());
        assertEquals(want.ops(), got.ops());
        assertEquals(want.collectiveNanos(), got.collectiveNanos());
        assertEquals(want.bytes(), got.bytes());
        assertEquals(want.lastOp(), got.lastOp());
        assertEquals(want.lastOpEndMillis(), got.lastOpEndMillis());
        assertArrayEquals(want.latenessNanos(), got.latenessNanos());
        assertArrayEquals(want.lastCounts(), got.lastCounts());
        assertEquals(want.stalls().size(), got.stalls().size());
        for (int i = 0; i < want.stalls().size(); i++) {
            assertEquals(want.stalls().get(i).op(), got.stalls().get(i).op());
            assertArrayEquals(want.stalls().get(i).missingRanks(), got.stalls().get(i).missingRanks());
            assertEquals(want.stalls().get(i).seconds(), got.stalls().get(i).seconds());
        }
        assertEquals(want.resets(), got.resets());
        assertEquals(want.points(), got.points());
    }

    @Test
    void everyFieldSurvivesEncodeAndDecode() {
        RankSnapshot zero = rankZero();
        byte[] bytes = zero.encode();
        assertSame(zero, RankSnapshot.decode(bytes));
        // Names are written once: 256 points of three names take well under 40 bytes each.
        assertTrue(bytes.length < 256 * 40, bytes.length + " bytes");
    }

    @Test
    void aPlainRanksSnapshotWithNothingYetRoundTrips() {
        RankSnapshot fresh = new RankSnapshot(5, 8, null, 1L, 0, 2L, 0, 0, 0, null, 0, null, null, null, 0, null);
        RankSnapshot back = RankSnapshot.decode(fresh.encode());
        assertSame(fresh, back);
        assertEquals("", back.lastOp());
        assertEquals(0, back.latenessNanos().length);
        assertEquals(List.of(), back.points());
    }

    @Test
    void aCutShortForeignOrNewerSnapshotIsOneClearError() {
        byte[] bytes = rankZero().encode();
        IllegalArgumentException cut = assertThrows(IllegalArgumentException.class,
                () -> RankSnapshot.decode(Arrays.copyOf(bytes, bytes.length - 3)));
        assertTrue(cut.getMessage().contains("cut short"), cut.getMessage());

        assertThrows(IllegalArgumentException.class, () -> RankSnapshot.decode("hello, world".getBytes()));

        byte[] newer = bytes.clone();
        newer[4] = (byte) (RankSnapshot.VERSION + 1);
        IllegalArgumentException version = assertThrows(IllegalArgumentException.class,
                () -> RankSnapshot.decode(newer));
        assertTrue(version.getMessage().contains("version " + (RankSnapshot.VERSION + 1)), version.getMessage());
    }
}
