package io.kolo.view;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

/** The straggler rule of docs/jobs.md, on rank 0's figures as a 3-rank job would publish them. */
class StragglersTest {
    private static final long MS = 1_000_000L;

    private static RankSnapshot rankZero(int generation, long timeMillis, long ops, long[] lateNanos, long[] lastCounts) {
        return new RankSnapshot(0, lateNanos.length, "h", 1, generation, timeMillis, ops, 0, 0, "x", timeMillis,
                lateNanos, lastCounts, List.of(), 0, List.of());
    }

    @Test
    void aRankLastInMostOpsByMoreThanATenthOfTheirSpacingIsOne() {
        // 100 ops in 10 s (one every 100 ms): rank 2 was last in 80 of them, 40 ms late each; rank 1 in 20, 1 ms late.
        RankSnapshot before = rankZero(0, 1_000_000, 500, new long[]{0, 100 * MS, 2000 * MS}, new long[]{0, 100, 50});
        RankSnapshot after = rankZero(0, 1_010_000, 600, new long[]{0, 120 * MS, 5200 * MS}, new long[]{0, 120, 130});
        assertArrayEquals(new boolean[]{false, false, true}, Stragglers.mark(List.of(before, after)));
    }

    @Test
    void lateByLessThanATenthOfTheSpacingOrInFewerThanHalfTheOpsIsNot() {
        // One op a second: rank 2 was last in every op, but only 50 ms late (a tenth of the spacing is 100 ms).
        RankSnapshot before = rankZero(0, 0, 0, new long[]{0, 0, 0}, new long[]{0, 0, 0});
        RankSnapshot after = rankZero(0, 30_000, 30, new long[]{0, 0, 30 * 50 * MS}, new long[]{0, 0, 30});
        assertArrayEquals(new boolean[]{false, false, false}, Stragglers.mark(List.of(before, after)));
        // Fast ops (every 1 ms): 4 ms late is under the 5 ms floor; 6 ms late, in 60 % of the ops, is a straggler.
        RankSnapshot floor = rankZero(0, 1000, 1000, new long[]{0, 0, 600 * 4 * MS}, new long[]{0, 0, 600});
        assertArrayEquals(new boolean[]{false, false, false}, Stragglers.mark(List.of(before, floor)));
        RankSnapshot over = rankZero(0, 1000, 1000, new long[]{0, 0, 600 * 6 * MS}, new long[]{0, 0, 600});
        assertArrayEquals(new boolean[]{false, false, true}, Stragglers.mark(List.of(before, over)));
        // Last in 49 of 100 ops, however late: not half.
        RankSnapshot some = rankZero(0, 1000, 100, new long[]{0, 0, 49 * 500 * MS}, new long[]{0, 0, 49});
        assertArrayEquals(new boolean[]{false, false, false}, Stragglers.mark(List.of(before, some)));
    }

    @Test
    void oneSnapshotCountsFromTheStartAndAnEarlierGenerationIsLeftOut() {
        RankSnapshot only = rankZero(0, 5000, 10, new long[]{0, 10 * 30 * MS, 0}, new long[]{0, 10, 0});
        assertArrayEquals(new boolean[]{false, true, false}, Stragglers.mark(List.of(only)));
        // Generation 1 restarted its counters with two ranks: rank 1's old figures do not count against it.
        RankSnapshot old = rankZero(0, 1000, 900, new long[]{0, 900 * 30 * MS, 0}, new long[]{0, 900, 0});
        RankSnapshot next = rankZero(1, 6000, 10, new long[]{0, 0}, new long[]{0, 0});
        assertArrayEquals(new boolean[]{false, false}, Stragglers.mark(List.of(old, next)));
        assertArrayEquals(new boolean[0], Stragglers.mark(List.of()));
    }
}
