package io.kolo.view;

import java.time.Duration;
import java.util.List;

/**
 * Which ranks the others keep waiting for, from rank 0's snapshots (the coordinator's figures): over the snapshots of
 * the last {@link #WINDOW}, a rank is a straggler when it was the last to submit in at least half of the ops rank 0
 * completed, and the others waited for it on average more than {@link #MIN_WAIT} and more than a tenth of the mean
 * time between ops. A rank that is last now and then, or late by a hair, is not one.
 */
public final class Stragglers {
    /** How far back the rule looks. */
    public static final Duration WINDOW = Duration.ofSeconds(30);
    /** The least average wait that counts, whatever the pace of the ops. */
    public static final Duration MIN_WAIT = Duration.ofMillis(5);

    private Stragglers() {
    }

    /**
     * Marks the stragglers among the job's ranks.
     *
     * @param rankZero rank 0's snapshots of the last {@link #WINDOW}, oldest first (the caller picks the window); with
     *                 one snapshot, the figures since the job began; snapshots of an earlier elastic generation are
     *                 left out
     * @return one flag per rank of the newest snapshot's job; all false when there is no snapshot or no op
     */
    public static boolean[] mark(List<RankSnapshot> rankZero) {
        if (rankZero.isEmpty()) {
            return new boolean[0];
        }
        RankSnapshot newest = rankZero.getLast();
        boolean[] straggler = new boolean[newest.size()];
        // An elastic job's next generation starts its counters anew, with other ranks: only the newest one counts.
        RankSnapshot oldest = null;
        for (RankSnapshot s : rankZero) {
            if (s != newest && s.generation() == newest.generation() && s.size() == newest.size()) {
                oldest = s;
                break;
            }
        }
        long ops = newest.ops() - (oldest == null ? 0 : oldest.ops());
        if (ops <= 0) {
            return straggler;
        }
        double meanBetweenNanos = oldest == null ? 0
                : (newest.timeMillis() - oldest.timeMillis()) * 1e6 / ops;
        double threshold = Math.max(MIN_WAIT.toNanos(), meanBetweenNanos / 10);
        int ranks = Math.min(straggler.length, newest.lastCounts().length);
        for (int r = 0; r < ranks; r++) {
            long last = newest.lastCounts()[r] - at(oldest == null ? null : oldest.lastCounts(), r);
            long waited = newest.latenessNanos()[r] - at(oldest == null ? null : oldest.latenessNanos(), r);
            straggler[r] = last > 0 && 2 * last >= ops && (double) waited / last > threshold;
        }
        return straggler;
    }

    /** {@code figures[r]}, or 0 when the older snapshot has no such rank (none yet, or a smaller elastic job). */
    private static long at(long[] figures, int r) {
        return figures == null || r >= figures.length ? 0 : figures[r];
    }
}
