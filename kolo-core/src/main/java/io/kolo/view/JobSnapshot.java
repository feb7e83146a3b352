package io.kolo.view;

import java.util.List;

/**
 * A job's view at one moment, copied under the {@link JobView}'s lock, so that its read-outs ({@link JobJson},
 * {@link JobMetrics}) render it without holding the lock and without seeing it change halfway.
 *
 * @param nowMillis       the view's clock when copied: the end, for a job that ended
 * @param progress        the slowest rank's newest {@code progress} (0 to 1), or null when the program reports none
 * @param pointsCursor    the number of the newest metric point the view kept
 * @param metricsSince    which points {@code metrics} holds: those numbered after it, or every one kept when null
 */
record JobSnapshot(String state, int size, int generation, boolean elastic, long startedAtMillis, long nowMillis,
                   String command, Double progress, List<RankState> ranks, long pointsCursor, Long metricsSince,
                   List<Series> metrics, List<RankSnapshot.Stall> stalls, List<Event> events) {

    JobSnapshot {
        ranks = List.copyOf(ranks);
        metrics = List.copyOf(metrics);
        stalls = List.copyOf(stalls);
        events = List.copyOf(events);
    }

    double elapsedSeconds() {
        return (nowMillis - startedAtMillis) / 1000.0;
    }

    /** The hosts the ranks run on, each once, in rank order. */
    List<String> hosts() {
        return ranks.stream().map(RankState::host).filter(h -> !h.isEmpty()).distinct().toList();
    }

    /** The rank numbered {@code rank}, or null when the view has none. */
    RankState rank(int rank) {
        for (RankState r : ranks) {
            if (r.rank() == rank) {
                return r;
            }
        }
        return null;
    }

    /**
     * What the view knows of one rank.
     *
     * @param latest the rank's newest snapshot, or null before its first
     */
    record RankState(int rank, String host, long pid, String state, Integer exitCode, String cause,
                     long startedMillis, RankSnapshot latest, double latenessSeconds,
                     double coordinatorLatenessSeconds, double collectiveLatenessSeconds, long lastCount,
                     boolean straggler, List<String> output) {
        RankState {
            output = List.copyOf(output);
        }

        boolean ended() {
            return state.equals("EXITED") || state.equals("FAILED");
        }
    }

    /** One rank's points of one metric, oldest first ({@code points} may hold only the newest, see the read-out). */
    record Series(String name, int rank, List<RankSnapshot.Point> points) {
        Series {
            points = List.copyOf(points);
        }
    }

    /** Something that happened to the job or one of its ranks ({@code rank} null: the job). */
    record Event(long timeMillis, String kind, Integer rank, String message) {
    }
}
