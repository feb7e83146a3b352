package io.kolo.view;

import io.kolo.bootstrap.KeyValueStore;
import io.kolo.bootstrap.StoreKeys;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;

/**
 * The one owner of a job's view: what its launcher saw (ranks started and exited, their last output lines, elastic
 * resets, the end) and what its ranks published to the job's store ({@link RankSnapshot} under {@code view/R}, polled
 * on a thread of its own every interval). Everything the page, {@code /api/job}, {@code /metrics} and the report show
 * is read from here, as a {@link JobSnapshot} copied under its lock and rendered without it: {@link #json()}
 * ({@link JobJson}) and {@link #prometheus()} ({@link JobMetrics}). Thread-safe: the launcher's threads, the poller
 * and the HTTP server's threads all go through its lock.
 */
public final class JobView implements AutoCloseable {
    /** The job's states in {@code /api/job}. */
    public static final String RUNNING = "RUNNING";
    public static final String SUCCEEDED = "SUCCEEDED";
    public static final String FAILED = "FAILED";
    /** Output lines kept per rank. */
    static final int OUTPUT_LINES = 20;
    /** Metric points kept per name and rank, the oldest dropped first. */
    static final int MAX_POINTS = 2000;
    static final int MAX_EVENTS = 1000;
    /** The engine's own series, one point per snapshot, charted like the program's metrics. */
    static final String OPS_PER_SECOND = "kolo_ops_per_second";
    static final String COLLECTIVE_SHARE = "kolo_collective_share";
    static final String BYTES_PER_SECOND = "kolo_bytes_per_second";
    private static final String PROGRESS = "progress";
    private static final System.Logger LOG = System.getLogger(JobView.class.getName());

    private record MetricKey(String name, int rank) {
    }

    /** What the view knows of one rank. */
    private static final class Rank {
        final int rank;
        String host = "";
        long pid = -1;
        String state = "STARTING";
        Integer exitCode;
        String cause;
        long startedMillis;
        long lastSeq = -1;
        RankSnapshot latest;
        // Its snapshots of the last Stragglers.WINDOW, oldest first: the straggler rules look at that span.
        final Deque<RankSnapshot> window = new ArrayDeque<>();
        double latenessSeconds;
        double coordinatorLatenessSeconds;
        double collectiveLatenessSeconds;
        long lastCount;
        boolean straggler;
        final Deque<String> output = new ArrayDeque<>();

        Rank(int rank, long startedMillis) {
            this.rank = rank;
            this.startedMillis = startedMillis;
        }

        boolean ended() {
            return state.equals("EXITED") || state.equals("FAILED");
        }
    }

    private final String command;
    private final boolean elastic;
    private final long startedAtMillis;
    private final Duration interval;
    private final Object lock = new Object();
    private final TreeMap<Integer, Rank> ranks = new TreeMap<>();
    private final Map<MetricKey, Deque<RankSnapshot.Point>> metrics = new LinkedHashMap<>();
    private final Deque<JobSnapshot.Event> events = new ArrayDeque<>();
    // A snapshot came since the straggler rules last looked: they look again before the view is read.
    private boolean judged = true;
    private KeyValueStore store;
    private int size;
    private int generation;
    private String state = RUNNING;
    private long endedAtMillis;
    private List<RankSnapshot.Stall> stalls = List.of();
    /** The number of the newest metric point kept: {@code /api/job?since=} gives the points after a number. */
    private long pointSeq;
    private Thread poller;
    private volatile boolean closed;

    /**
     * @param command  the job's command line as the user gave it, shown in the header
     * @param size     the job's number of ranks, 0 when not known yet (learnt from the snapshots)
     * @param elastic  whether the job is elastic (its size and ranks change between generations)
     * @param interval how often the store is polled
     */
    public JobView(String command, int size, boolean elastic, Duration interval) {
        this.command = command;
        this.size = size;
        this.elastic = elastic;
        this.interval = interval;
        this.startedAtMillis = System.currentTimeMillis();
    }

    /** Reads the ranks' snapshots from {@code store} from now on (the job's store, or an elastic generation's part). */
    public void watch(KeyValueStore store) {
        synchronized (lock) {
            this.store = store;
        }
    }

    /** Polls the store every interval on a daemon thread of its own, until {@link #close()}. */
    public void start() {
        synchronized (lock) {
            if (poller != null) {
                return;
            }
            poller = Thread.ofPlatform().daemon().name("kolo-view-poll").start(() -> {
                while (!closed) {
                    poll();
                    try {
                        Thread.sleep(interval);
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            });
        }
    }

    /** Reads every rank's newest snapshot from the store once; a store that no longer answers is skipped. */
    public void poll() {
        KeyValueStore s;
        int n;
        synchronized (lock) {
            s = store;
            n = size;
        }
        if (s == null) {
            return;
        }
        for (int r = 0; r < Math.max(n, 1); r++) {
            Optional<String> value;
            try {
                value = s.tryGet(StoreKeys.view(r));
            } catch (RuntimeException storeGone) {
                return;
            }
            if (value.isEmpty()) {
                continue;
            }
            RankSnapshot snapshot;
            try {
                snapshot = RankSnapshot.fromStoreValue(value.get());
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.DEBUG, "unreadable view snapshot of rank {0}: {1}", r, e.getMessage());
                continue;
            }
            accept(snapshot);
            if (n == 0) {
                n = snapshot.size();
            }
        }
        synchronized (lock) {
            judge();
        }
    }

    /** A rank's snapshot, as polled (or handed over by a test). */
    void accept(RankSnapshot s) {
        synchronized (lock) {
            if (s.generation() < generation || closedState() && !ranks.containsKey(s.rank())) {
                return;
            }
            if (elastic ? s.generation() > generation : s.size() > size) {
                size = s.size();
            }
            Rank r = rank(s.rank());
            RankSnapshot before = r.latest;
            if (before != null && s.timeMillis() <= before.timeMillis()) {
                return;
            }
            if (!s.host().isEmpty()) {
                r.host = s.host();
            }
            if (r.pid > 0 && s.pid() != r.pid) {
                // The launcher knows the process it started (a wrapper: ssh, a shell); the rank's JVM says its own.
                addEvent("pid", s.rank(), "rank " + s.rank() + " runs as pid " + s.pid() + " on " + r.host
                        + " (the launcher started process " + r.pid + ")");
            }
            r.pid = s.pid();
            if (r.state.equals("STARTING")) {
                r.state = "RUNNING";
            }
            if (before == null && r.startedMillis > s.timeMillis()) {
                r.startedMillis = s.timeMillis();
            }
            r.latest = s;
            r.window.addLast(s);
            while (s.timeMillis() - r.window.getFirst().timeMillis() > Stragglers.WINDOW.toMillis()) {
                r.window.removeFirst();
            }
            judged = false;
            if (before != null && before.generation() == s.generation()) {
                double seconds = (s.timeMillis() - before.timeMillis()) / 1000.0;
                if (s.ops() >= before.ops()) {
                    addPoint(s.rank(), OPS_PER_SECOND, (s.ops() - before.ops()) / seconds, s.timeMillis());
                    addPoint(s.rank(), COLLECTIVE_SHARE,
                            Math.min(1.0, (s.collectiveNanos() - before.collectiveNanos()) / 1e9 / seconds),
                            s.timeMillis());
                    addPoint(s.rank(), BYTES_PER_SECOND, (s.bytes() - before.bytes()) / seconds, s.timeMillis());
                }
            }
            for (RankSnapshot.Point p : s.points()) {
                if (p.seq() > r.lastSeq) {
                    keep(new MetricKey(p.name(), s.rank()), p);
                    r.lastSeq = p.seq();
                }
            }
            if (s.rank() == 0) {
                fromCoordinator(s);
            }
        }
    }

    /** Rank 0's snapshot also holds what the coordinator saw of every rank: ops it was last in, stalls. */
    private void fromCoordinator(RankSnapshot s) {
        long[] counts = s.lastCounts();
        for (int i = 0; i < counts.length; i++) {
            rank(i).lastCount = counts[i];
        }
        Set<String> before = new LinkedHashSet<>();
        stalls.forEach(st -> before.add(st.op()));
        for (RankSnapshot.Stall st : s.stalls()) {
            if (!before.contains(st.op())) {
                addEvent("stall", null, "op " + st.op() + " waits for rank" + (st.missingRanks().length == 1 ? " "
                        : "s ") + Arrays.toString(st.missingRanks()).replaceAll("[\\[\\]]", "") + " ("
                        + Math.round(st.seconds()) + " s)");
            }
        }
        stalls = s.stalls();
    }

    /**
     * Runs the straggler rules over every rank's snapshots of the last {@link Stragglers#WINDOW} (up to the newest
     * snapshot of any rank: a rank that stopped publishing drops out), once per poll or read of the view.
     */
    private void judge() {
        if (judged) {
            return;
        }
        judged = true;
        long newest = Long.MIN_VALUE;
        for (Rank r : ranks.values()) {
            if (!r.window.isEmpty()) {
                newest = Math.max(newest, r.window.getLast().timeMillis());
            }
        }
        List<List<RankSnapshot>> byRank = new ArrayList<>();
        for (int i = 0; i < size; i++) {
            Rank r = ranks.get(i);
            if (r == null) {
                byRank.add(List.of());
                continue;
            }
            while (!r.window.isEmpty() && newest - r.window.getFirst().timeMillis() > Stragglers.WINDOW.toMillis()) {
                r.window.removeFirst();
            }
            byRank.add(List.copyOf(r.window));
        }
        Stragglers.Verdict verdict = Stragglers.judge(byRank);
        boolean[] flagged = verdict.straggler();
        for (Rank r : ranks.values()) {
            boolean known = r.rank < flagged.length;
            r.coordinatorLatenessSeconds = known ? verdict.coordinatorLatenessSeconds()[r.rank] : 0;
            r.collectiveLatenessSeconds = known ? verdict.collectiveLatenessSeconds()[r.rank] : 0;
            r.latenessSeconds = known ? verdict.latenessSeconds(r.rank) : 0;
            boolean was = r.straggler;
            r.straggler = known && flagged[r.rank];
            if (r.straggler && !was) {
                addEvent("straggler", r.rank, "rank " + r.rank + " is a straggler: the others keep waiting for it");
            }
        }
    }

    /**
     * Rank {@code rank}'s process started on {@code host} with {@code pid}: the process the launcher started, which
     * may wrap the rank's JVM; the rank's own pid replaces it when its first snapshot arrives (an event says so).
     */
    public void rankStarted(int rank, String host, long pid) {
        synchronized (lock) {
            Rank r = new Rank(rank, System.currentTimeMillis());
            Rank old = ranks.get(rank);
            if (old != null) {
                r.output.addAll(old.output);
            }
            r.host = host == null ? "" : host;
            r.pid = pid;
            ranks.put(rank, r);
            size = Math.max(size, rank + 1);
            addEvent("start", rank, "rank " + rank + " started on " + r.host
                    + (pid > 0 ? " (launcher's process " + pid + ")" : ""));
        }
    }

    /**
     * Rank {@code rank} exited with {@code exitCode}; {@code cause} says why when it failed (null: not known yet). A
     * second call for the same exit only adds a cause the first lacked.
     */
    public void rankExited(int rank, int exitCode, String cause) {
        synchronized (lock) {
            Rank r = rank(rank);
            if (r.ended() && r.exitCode != null && r.exitCode == exitCode) {
                if (r.cause == null && cause != null) {
                    r.cause = cause;
                }
                return;
            }
            r.exitCode = exitCode;
            r.cause = cause;
            r.state = exitCode == 0 ? "EXITED" : "FAILED";
            addEvent(exitCode == 0 ? "exit" : "failure", rank, exitCode == 0 ? "rank " + rank + " exited"
                    : cause != null ? cause : "rank " + rank + " exited with code " + exitCode);
        }
    }

    /** One line of rank {@code rank}'s output; the last {@value #OUTPUT_LINES} are kept. */
    public void output(int rank, String line) {
        synchronized (lock) {
            Deque<String> lines = rank(rank).output;
            if (lines.size() == OUTPUT_LINES) {
                lines.removeFirst();
            }
            lines.addLast(line);
        }
    }

    /** Something happened to the job: an elastic reset or join, a failure, a stop. */
    public void event(String kind, String message) {
        synchronized (lock) {
            addEvent(kind, null, message);
        }
    }

    /**
     * An elastic job's next generation formed with {@code size} ranks, its snapshots read from {@code scope} from now
     * on; ranks beyond the new size leave the view.
     */
    public void generation(int generation, int size, KeyValueStore scope) {
        synchronized (lock) {
            this.generation = generation;
            this.size = size;
            this.store = scope;
            ranks.tailMap(size).clear();
            stalls = List.of();
            for (Rank r : ranks.values()) {
                if (r.ended()) {
                    // The rank number goes on in the next generation, held by a survivor or a new worker; what ended
                    // the old holder stays in the events.
                    r.state = "STARTING";
                    r.exitCode = null;
                    r.cause = null;
                }
                r.latest = null;
                r.window.clear();
                r.straggler = false;
                r.latenessSeconds = 0;
                r.coordinatorLatenessSeconds = 0;
                r.collectiveLatenessSeconds = 0;
                r.lastCount = 0;
            }
        }
    }

    /** The job ended: {@link #SUCCEEDED} or {@link #FAILED}. Only the first end counts. */
    public void ended(String finalState) {
        synchronized (lock) {
            if (!state.equals(RUNNING)) {
                return;
            }
            state = finalState;
            endedAtMillis = System.currentTimeMillis();
            addEvent("end", null, "the job " + (finalState.equals(SUCCEEDED) ? "succeeded" : "failed"));
        }
    }

    public String state() {
        synchronized (lock) {
            return state;
        }
    }

    /** Stops polling. */
    @Override
    public void close() {
        closed = true;
        Thread t;
        synchronized (lock) {
            t = poller;
        }
        if (t != null) {
            t.interrupt();
            try {
                t.join(Duration.ofSeconds(5));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** The view as {@code /api/job} serves it (the schema of docs/jobs.md), with every metric point kept. */
    public String json() {
        return json(-1);
    }

    /**
     * The view as {@code /api/job?since=SINCE} serves it: the same, but {@code metrics} holds only the points kept
     * after the one numbered {@code since} (a {@code metricsCursor} of an earlier answer), so a page that keeps what
     * it had asks for a few points per poll rather than all of them; {@code since} &lt; 0 gives every point. The
     * answer's {@code metricsCursor} numbers its newest point, and {@code metricsSince} says which points it holds:
     * {@code null} for all of them. A cursor this view never gave (another job's, or a launcher started since) also
     * gives every point, with {@code metricsSince} null, so the page starts afresh.
     */
    public String json(long since) {
        return JobJson.render(snapshot(since, false));
    }

    /**
     * The view in Prometheus' text exposition format 0.0.4 ({@link JobMetrics}): the job, its ranks, and the newest
     * value of each metric its program reports.
     */
    public String prometheus() {
        return JobMetrics.render(snapshot(-1, true));
    }

    /**
     * A copy of the view as it is now, the straggler rules applied first: the metric points after {@code since} (all
     * of them when {@code since} is negative or a cursor this view never gave), or only each series' newest.
     */
    private JobSnapshot snapshot(long since, boolean newestOnly) {
        synchronized (lock) {
            judge();
            boolean partial = !newestOnly && since >= 0 && since <= pointSeq;
            List<JobSnapshot.RankState> rankStates = new ArrayList<>(ranks.size());
            for (Rank r : ranks.values()) {
                rankStates.add(new JobSnapshot.RankState(r.rank, r.host, r.pid, r.state, r.exitCode, r.cause,
                        r.startedMillis, r.latest, r.latenessSeconds, r.coordinatorLatenessSeconds,
                        r.collectiveLatenessSeconds, r.lastCount, r.straggler, List.copyOf(r.output)));
            }
            List<JobSnapshot.Series> series = new ArrayList<>(metrics.size());
            metrics.forEach((key, points) -> {
                if (newestOnly) {
                    series.add(new JobSnapshot.Series(key.name(), key.rank(),
                            points.isEmpty() ? List.of() : List.of(points.getLast())));
                } else if (!partial) {
                    series.add(new JobSnapshot.Series(key.name(), key.rank(), List.copyOf(points)));
                } else if (!points.isEmpty() && points.getLast().seq() > since) {
                    List<RankSnapshot.Point> after = new ArrayList<>();
                    for (RankSnapshot.Point p : points) {
                        if (p.seq() > since) {
                            after.add(p);
                        }
                    }
                    series.add(new JobSnapshot.Series(key.name(), key.rank(), after));
                }
            });
            return new JobSnapshot(state, size, generation, elastic, startedAtMillis, now(), command, progress(),
                    rankStates, pointSeq, partial ? (Long) since : null, series, stalls, List.copyOf(events));
        }
    }

    /** The slowest rank's newest {@code progress} (0 to 1), or null when the program reports none. */
    private Double progress() {
        Double min = null;
        for (Map.Entry<MetricKey, Deque<RankSnapshot.Point>> e : metrics.entrySet()) {
            if (e.getKey().name().equals(PROGRESS) && !e.getValue().isEmpty()) {
                double v = Math.clamp(e.getValue().getLast().value(), 0.0, 1.0);
                min = min == null ? v : Math.min(min, v);
            }
        }
        return min;
    }

    private long now() {
        return state.equals(RUNNING) ? System.currentTimeMillis() : endedAtMillis;
    }

    private boolean closedState() {
        return !state.equals(RUNNING);
    }

    private Rank rank(int rank) {
        return ranks.computeIfAbsent(rank, r -> new Rank(r, startedAtMillis));
    }

    private void addPoint(int rank, String name, double value, long timeMillis) {
        if (Double.isFinite(value)) {
            keep(new MetricKey(name, rank), new RankSnapshot.Point(0, name, value, -1, timeMillis));
        }
    }

    /** Keeps {@code p}, numbered in the order the view kept it (its rank's number is the rank's, not the view's). */
    private void keep(MetricKey key, RankSnapshot.Point p) {
        Deque<RankSnapshot.Point> points = metrics.computeIfAbsent(key, k -> new ArrayDeque<>());
        if (points.size() == MAX_POINTS) {
            points.removeFirst();
        }
        points.addLast(new RankSnapshot.Point(++pointSeq, p.name(), p.value(), p.step(), p.timeMillis()));
    }

    private void addEvent(String kind, Integer rank, String message) {
        if (events.size() == MAX_EVENTS) {
            events.removeFirst();
        }
        events.addLast(new JobSnapshot.Event(System.currentTimeMillis(), kind, rank, message));
    }
}
