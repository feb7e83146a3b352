package io.kolo.view;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Which ranks the others keep waiting for, by two rules over the snapshots of the last {@link #WINDOW}; a rank either
 * rule names is a straggler (docs/jobs.md states both).
 * <ul>
 * <li><b>The coordinator's</b>, from rank 0's figures of the ops that reach it (ops outside the response cache): a
 * rank is a straggler when it was the last to submit in at least half of the ops rank 0 completed, and the others
 * waited for it on average more than the threshold.</li>
 * <li><b>The collectives'</b>, from every rank's own time in collectives, which sees every op, cached or not: a rank
 * that submits late spends little time inside each collective while the others wait there for it. Per rank r, its
 * time in collectives per op in the window is c_r; the others' wait for r per op is the median of the others' c
 * minus c_r; r is a straggler when that exceeds the threshold. The ranks must have run the same ops: when their op
 * counts in the window differ by more than a tenth (and one op), this rule says nothing.</li>
 * </ul>
 * The threshold is the larger of {@link #MIN_WAIT} and a tenth of the mean time between ops: a rank that is last now
 * and then, or late by a hair, is not one.
 */
public final class Stragglers {
    /** How far back the rules look. */
    public static final Duration WINDOW = Duration.ofSeconds(30);
    /** The least average wait that counts, whatever the pace of the ops. */
    public static final Duration MIN_WAIT = Duration.ofMillis(5);
    /** How far the ranks' op counts in the window may differ for the collectives' rule to compare them. */
    private static final double SAME_OPS = 0.1;

    /**
     * What the rules found, per rank of the newest generation: whether it is a straggler, and how long in all the
     * others waited for it since the generation began, seen both ways (0 where a way cannot tell).
     *
     * @param straggler                  either rule names the rank
     * @param coordinatorLatenessSeconds from rank 0's coordinator: the waits of the ops the rank was last in, exact,
     *                                   but only of the ops outside the response cache
     * @param collectiveLatenessSeconds  from the ranks' time in collectives: the median of the others' time per op
     *                                   minus the rank's, times its ops, when it is positive and the ranks ran the same
     *                                   ops; an estimate that covers cached ops too
     */
    public record Verdict(boolean[] straggler, double[] coordinatorLatenessSeconds, double[] collectiveLatenessSeconds) {
        /** The larger of the two ways: what {@code latenessSeconds} shows. */
        public double latenessSeconds(int rank) {
            return Math.max(coordinatorLatenessSeconds[rank], collectiveLatenessSeconds[rank]);
        }
    }

    private Stragglers() {
    }

    /**
     * Both rules over every rank's snapshots.
     *
     * @param byRank {@code byRank.get(r)}: rank r's snapshots of the last {@link #WINDOW}, oldest first (empty when
     *               none came); snapshots of an earlier elastic generation than the newest are left out
     * @return per rank of the newest generation's job; empty arrays when no snapshot came
     */
    public static Verdict judge(List<List<RankSnapshot>> byRank) {
        RankSnapshot newest = null;
        for (List<RankSnapshot> snapshots : byRank) {
            for (RankSnapshot s : snapshots) {
                if (newest == null || s.generation() > newest.generation()
                        || s.generation() == newest.generation() && s.timeMillis() > newest.timeMillis()) {
                    newest = s;
                }
            }
        }
        if (newest == null) {
            return new Verdict(new boolean[0], new double[0], new double[0]);
        }
        int size = newest.size();
        List<List<RankSnapshot>> current = new ArrayList<>();
        for (int r = 0; r < size; r++) {
            List<RankSnapshot> kept = new ArrayList<>();
            if (r < byRank.size()) {
                for (RankSnapshot s : byRank.get(r)) {
                    if (s.generation() == newest.generation() && s.size() == size && s.rank() == r) {
                        kept.add(s);
                    }
                }
            }
            current.add(kept);
        }
        boolean[] straggler = fromCoordinator(current.getFirst());
        if (straggler.length != size) {
            straggler = Arrays.copyOf(straggler, size);
        }
        boolean[] fromCollectives = fromCollectives(current);
        double[] coordinator = new double[size];
        if (!current.getFirst().isEmpty()) {
            long[] late = current.getFirst().getLast().latenessNanos();
            for (int r = 0; r < Math.min(size, late.length); r++) {
                coordinator[r] = late[r] / 1e9;
            }
        }
        double[] collective = collectiveLateness(current);
        for (int r = 0; r < size; r++) {
            straggler[r] |= fromCollectives[r];
        }
        return new Verdict(straggler, coordinator, collective);
    }

    /**
     * The coordinator's rule alone.
     *
     * @param rankZero rank 0's snapshots of the last {@link #WINDOW}, oldest first; with one snapshot, the figures
     *                 since the job began; snapshots of an earlier elastic generation are left out
     * @return one flag per rank of the newest snapshot's job; all false when there is no snapshot or no op
     */
    public static boolean[] fromCoordinator(List<RankSnapshot> rankZero) {
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
        double threshold = threshold(oldest == null ? 0 : (newest.timeMillis() - oldest.timeMillis()) * 1e6 / ops);
        int ranks = Math.min(straggler.length, newest.lastCounts().length);
        for (int r = 0; r < ranks; r++) {
            long last = newest.lastCounts()[r] - at(oldest == null ? null : oldest.lastCounts(), r);
            long waited = newest.latenessNanos()[r] - at(oldest == null ? null : oldest.latenessNanos(), r);
            straggler[r] = last > 0 && 2 * last >= ops && (double) waited / last > threshold;
        }
        return straggler;
    }

    /**
     * The collectives' rule alone.
     *
     * @param byRank {@code byRank.get(r)}: rank r's snapshots of the window, oldest first, all of one generation;
     *               with one snapshot of a rank (or windows that do not overlap), the figures since the job began
     * @return one flag per rank; all false when fewer than two ranks have snapshots, or they ran different ops
     */
    public static boolean[] fromCollectives(List<List<RankSnapshot>> byRank) {
        int size = byRank.size();
        boolean[] straggler = new boolean[size];
        // The ranks publish at moments of their own: each one's figures are read at common times, T0 (the latest of
        // their oldest snapshots) and T1 (the earliest of their newest), by interpolating between its snapshots.
        long t0 = Long.MIN_VALUE;
        long t1 = Long.MAX_VALUE;
        int present = 0;
        for (List<RankSnapshot> s : byRank) {
            if (!s.isEmpty()) {
                present++;
                t0 = Math.max(t0, s.getFirst().timeMillis());
                t1 = Math.min(t1, s.getLast().timeMillis());
            }
        }
        if (present < 2) {
            return straggler;
        }
        boolean sinceStart = t0 >= t1;
        double[] ops = new double[size];
        double[] perOp = new double[size];
        for (int r = 0; r < size; r++) {
            List<RankSnapshot> s = byRank.get(r);
            if (s.isEmpty()) {
                perOp[r] = Double.NaN;
                continue;
            }
            double[] end = sinceStart ? new double[]{s.getLast().ops(), s.getLast().collectiveNanos()} : at(s, t1);
            double[] start = sinceStart ? new double[]{0, 0} : at(s, t0);
            ops[r] = end[0] - start[0];
            perOp[r] = ops[r] > 0 ? (end[1] - start[1]) / ops[r] : Double.NaN;
        }
        if (!sameOps(ops, perOp)) {
            return straggler;
        }
        for (int r = 0; r < size; r++) {
            if (Double.isNaN(perOp[r])) {
                continue;
            }
            double wait = medianOfOthers(perOp, r) - perOp[r];
            double between = sinceStart ? 0 : (t1 - t0) * 1e6 / ops[r];
            straggler[r] = wait > threshold(between);
        }
        return straggler;
    }

    /**
     * Per rank, the others' wait for it since the generation began, estimated from the newest snapshots: the median
     * of the others' time in collectives per op minus its own, times its ops; 0 when not positive or when the ranks
     * ran different ops.
     */
    private static double[] collectiveLateness(List<List<RankSnapshot>> byRank) {
        int size = byRank.size();
        double[] seconds = new double[size];
        double[] ops = new double[size];
        double[] perOp = new double[size];
        // Read at a common time, the earliest of the ranks' newest snapshots, as the rule does.
        long t1 = Long.MAX_VALUE;
        for (List<RankSnapshot> s : byRank) {
            if (!s.isEmpty()) {
                t1 = Math.min(t1, s.getLast().timeMillis());
            }
        }
        int present = 0;
        for (int r = 0; r < size; r++) {
            List<RankSnapshot> s = byRank.get(r);
            double[] now = s.isEmpty() ? new double[]{0, 0} : at(s, t1);
            ops[r] = now[0];
            perOp[r] = ops[r] > 0 ? now[1] / ops[r] : Double.NaN;
            present += Double.isNaN(perOp[r]) ? 0 : 1;
        }
        if (present < 2 || !sameOps(ops, perOp)) {
            return seconds;
        }
        for (int r = 0; r < size; r++) {
            if (!Double.isNaN(perOp[r])) {
                seconds[r] = Math.max(0, medianOfOthers(perOp, r) - perOp[r]) * ops[r] / 1e9;
            }
        }
        return seconds;
    }

    /** Whether the ranks that have figures ran the same ops: counts within a tenth (and one op) of their median. */
    private static boolean sameOps(double[] ops, double[] perOp) {
        double[] counts = Arrays.stream(indices(perOp)).mapToDouble(r -> ops[r]).sorted().toArray();
        if (counts.length < 2) {
            return false;
        }
        double median = median(counts);
        double allowed = Math.max(1, SAME_OPS * median);
        return counts[0] >= median - allowed && counts[counts.length - 1] <= median + allowed;
    }

    /** The median of {@code values} other than the {@code r}th and the NaNs. */
    private static double medianOfOthers(double[] values, int r) {
        return median(Arrays.stream(indices(values)).filter(i -> i != r).mapToDouble(i -> values[i]).sorted()
                .toArray());
    }

    private static int[] indices(double[] values) {
        return java.util.stream.IntStream.range(0, values.length).filter(i -> !Double.isNaN(values[i])).toArray();
    }

    private static double median(double[] sorted) {
        int n = sorted.length;
        return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    }

    /** A rank's {ops, collectiveNanos} at {@code timeMillis}, read between the snapshots around it. */
    private static double[] at(List<RankSnapshot> snapshots, long timeMillis) {
        RankSnapshot before = snapshots.getFirst();
        for (RankSnapshot s : snapshots) {
            if (s.timeMillis() >= timeMillis) {
                if (s.timeMillis() == before.timeMillis() || s == before) {
                    return new double[]{s.ops(), s.collectiveNanos()};
                }
                double f = (double) (timeMillis - before.timeMillis()) / (s.timeMillis() - before.timeMillis());
                return new double[]{before.ops() + f * (s.ops() - before.ops()),
                        before.collectiveNanos() + f * (s.collectiveNanos() - before.collectiveNanos())};
            }
            before = s;
        }
        return new double[]{before.ops(), before.collectiveNanos()};
    }

    private static double threshold(double meanBetweenNanos) {
        return Math.max(MIN_WAIT.toNanos(), meanBetweenNanos / 10);
    }

    /** {@code figures[r]}, or 0 when the older snapshot has no such rank (none yet, or a smaller elastic job). */
    private static long at(long[] figures, int r) {
        return figures == null || r >= figures.length ? 0 : figures[r];
    }
}
