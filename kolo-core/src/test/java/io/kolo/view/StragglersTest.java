package io.kolo.view;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

/** The straggler rules of docs/jobs.md, on figures as the ranks of a job would publish them. */
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
        assertArrayEquals(new boolean[]{false, false, true}, Stragglers.fromCoordinator(List.of(before, after)));
    }

    @Test
    void lateByLessThanATenthOfTheSpacingOrInFewerThanHalfTheOpsIsNot() {
        // One op a second: rank 2 was last in every op, but only 50 ms late (a tenth of the spacing is 100 ms).
        RankSnapshot before = rankZero(0, 0, 0, new long[]{0, 0, 0}, new long[]{0, 0, 0});
        RankSnapshot after = rankZero(0, 30_000, 30, new long[]{0, 0, 30 * 50 * MS}, new long[]{0, 0, 30});
        assertArrayEquals(new boolean[]{false, false, false}, Stragglers.fromCoordinator(List.of(before, after)));
        // Fast ops (every 1 ms): 4 ms late is under the 5 ms floor; 6 ms late, in 60 % of the ops, is a straggler.
        RankSnapshot floor = rankZero(0, 1000, 1000, new long[]{0, 0, 600 * 4 * MS}, new long[]{0, 0, 600});
        assertArrayEquals(new boolean[]{false, false, false}, Stragglers.fromCoordinator(List.of(before, floor)));
        RankSnapshot over = rankZero(0, 1000, 1000, new long[]{0, 0, 600 * 6 * MS}, new long[]{0, 0, 600});
        assertArrayEquals(new boolean[]{false, false, true}, Stragglers.fromCoordinator(List.of(before, over)));
        // Last in 49 of 100 ops, however late: not half.
        RankSnapshot some = rankZero(0, 1000, 100, new long[]{0, 0, 49 * 500 * MS}, new long[]{0, 0, 49});
        assertArrayEquals(new boolean[]{false, false, false}, Stragglers.fromCoordinator(List.of(before, some)));
    }

    @Test
    void oneSnapshotCountsFromTheStartAndAnEarlierGenerationIsLeftOut() {
        RankSnapshot only = rankZero(0, 5000, 10, new long[]{0, 10 * 30 * MS, 0}, new long[]{0, 10, 0});
        assertArrayEquals(new boolean[]{false, true, false}, Stragglers.fromCoordinator(List.of(only)));
        // Generation 1 restarted its counters with two ranks: rank 1's old figures do not count against it.
        RankSnapshot old = rankZero(0, 1000, 900, new long[]{0, 900 * 30 * MS, 0}, new long[]{0, 900, 0});
        RankSnapshot next = rankZero(1, 6000, 10, new long[]{0, 0}, new long[]{0, 0});
        assertArrayEquals(new boolean[]{false, false}, Stragglers.fromCoordinator(List.of(old, next)));
        assertArrayEquals(new boolean[0], Stragglers.fromCoordinator(List.of()));
    }

    /**
     * Rank {@code rank}'s snapshots every second from {@code fromMillis} (plus {@code offsetMillis}, as ranks publish
     * at moments of their own) for {@code seconds} s, of a job that completes {@code opsPerSecond} ops a second in
     * which this rank spends {@code perOpMillis} inside each collective.
     */
    private static List<RankSnapshot> rank(int rank, int size, int generation, long offsetMillis, int seconds,
                                           double opsPerSecond, double perOpMillis) {
        List<RankSnapshot> out = new ArrayList<>();
        for (int i = 0; i <= seconds; i++) {
            long t = 1_000_000 + offsetMillis + 1000L * i;
            double ops = (t - 1_000_000) / 1000.0 * opsPerSecond;
            out.add(new RankSnapshot(rank, size, "h", 1, generation, t, Math.round(ops),
                    Math.round(ops * perOpMillis * MS), 0, "grad", t, new long[size], new long[size], List.of(), 0,
                    List.of()));
        }
        return out;
    }

    @Test
    void withCachedOpsTheRankTheOthersWaitForInsideTheirCollectivesIsOne() {
        // Two ranks, an op every 100 ms (threshold: 10 ms); rank 1 computes 30 ms longer, so rank 0 spends 32 ms in
        // each allreduce (30 of them waiting) and rank 1 2 ms. The coordinator saw none of it (cached ops).
        List<List<RankSnapshot>> two = List.of(rank(0, 2, 0, 0, 30, 10, 32), rank(1, 2, 0, 400, 30, 10, 2));
        Stragglers.Verdict v = Stragglers.judge(two);
        assertArrayEquals(new boolean[]{false, true}, v.straggler());
        assertArrayEquals(new boolean[]{false, false}, Stragglers.fromCoordinator(two.getFirst()));
        // Since the start rank 1 did 300 ops, each waited for 30 ms by rank 0.
        assertEquals(300 * 0.030, v.collectiveLatenessSeconds()[1], 0.3);
        assertEquals(0, v.collectiveLatenessSeconds()[0]);
        assertEquals(v.collectiveLatenessSeconds()[1], v.latenessSeconds(1));

        // Three ranks, 50 ops a second (threshold: 5 ms): ranks 0 and 2 spend 9 and 9.5 ms per op, rank 1 1 ms.
        List<List<RankSnapshot>> three = List.of(rank(0, 3, 0, 0, 30, 50, 9), rank(1, 3, 0, 700, 30, 50, 1),
                rank(2, 3, 0, 300, 30, 50, 9.5));
        assertArrayEquals(new boolean[]{false, true, false}, Stragglers.judge(three).straggler());
        // One snapshot each: the figures since the start, on the 5 ms floor.
        List<List<RankSnapshot>> once = List.of(List.of(three.get(0).get(10)), List.of(three.get(1).get(9)),
                List.of(three.get(2).get(10)));
        assertArrayEquals(new boolean[]{false, true, false}, Stragglers.fromCollectives(once));

        // Two slow ranks of four: the others wait 20 ms per op, for both.
        List<List<RankSnapshot>> four = List.of(rank(0, 4, 0, 0, 30, 20, 21), rank(1, 4, 0, 100, 30, 20, 22),
                rank(2, 4, 0, 200, 30, 20, 1.5), rank(3, 4, 0, 300, 30, 20, 1));
        assertArrayEquals(new boolean[]{false, false, true, true}, Stragglers.judge(four).straggler());
    }

    @Test
    void noiseLevelDifferencesDifferentOpsAndEarlierGenerationsMarkNoOne() {
        // 100 ops a second: 3.0, 3.4 and 2.1 ms per op; rank 2 is waited for 1.1 ms per op, under the 5 ms floor.
        assertArrayEquals(new boolean[3], Stragglers.judge(List.of(rank(0, 3, 0, 0, 30, 100, 3.0),
                rank(1, 3, 0, 500, 30, 100, 3.4), rank(2, 3, 0, 900, 30, 100, 2.1))).straggler());
        // An op a second: 60 ms of wait is under a tenth of the spacing.
        assertArrayEquals(new boolean[3], Stragglers.judge(List.of(rank(0, 3, 0, 0, 30, 1, 61),
                rank(1, 3, 0, 500, 30, 1, 62), rank(2, 3, 0, 900, 30, 1, 1))).straggler());
        // Ranks 0 and 1 also run ops of a process set of their own (twice the ops): not the same ops, no verdict.
        Stragglers.Verdict sets = Stragglers.judge(List.of(rank(0, 3, 0, 0, 30, 20, 30),
                rank(1, 3, 0, 500, 30, 20, 30), rank(2, 3, 0, 900, 30, 10, 2)));
        assertArrayEquals(new boolean[3], sets.straggler());
        assertArrayEquals(new double[3], sets.collectiveLatenessSeconds());
        // Generation 1 (two ranks) is even; rank 1's wait in generation 0 does not count.
        List<RankSnapshot> zero = new ArrayList<>(rank(0, 3, 0, 0, 30, 10, 40));
        zero.addAll(rank(0, 2, 1, 40_000, 10, 10, 3));
        List<RankSnapshot> one = new ArrayList<>(rank(1, 3, 0, 0, 30, 10, 1));
        one.addAll(rank(1, 2, 1, 40_500, 10, 10, 3));
        assertArrayEquals(new boolean[2], Stragglers.judge(List.of(zero, one, rank(2, 3, 0, 0, 30, 10, 40)))
                .straggler());
    }
}
