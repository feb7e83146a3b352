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
 * is read from here: {@link #json()} and {@link #prometheus()}. Thread-safe: the launcher's threads, the poller and
 * the HTTP server's threads all go through its lock.
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

    private record Event(long timeMillis, String kind, Integer rank, String message) {
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
    private final Deque<Event> events = new ArrayDeque<>();
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
        synchronized (lock) {
            judge();
            boolean partial = since >= 0 && since <= pointSeq;
            long now = now();
            double elapsed = (now - startedAtMillis) / 1000.0;
            Json j = new Json().beginObject();
            j.field("state", state).field("size", size);
            j.name("hosts").beginArray();
            hosts().forEach(j::value);
            j.endArray();
            j.field("generation", generation).field("elastic", elastic).field("startedAtMillis", startedAtMillis)
                    .field("elapsedSeconds", elapsed).field("command", command);
            Double progress = progress();
            j.name("progressPercentage").value(progress == null ? null : 100 * progress);
            j.name("estimatedRemainingSeconds").value(progress == null ? null : progress >= 1 ? 0.0
                    : progress <= 0 ? null : elapsed * (1 - progress) / progress);
            j.name("ranks").beginArray();
            for (Rank r : ranks.values()) {
                rankJson(j, r, now);
            }
            j.endArray();
            j.field("metricsCursor", pointSeq).name("metricsSince").value(partial ? (Long) since : null);
            j.name("metrics").beginArray();
            metrics.forEach((key, points) -> {
                if (partial && (points.isEmpty() || points.getLast().seq() <= since)) {
                    return;
                }
                for (RankSnapshot.Point p : points) {
                    if (partial && p.seq() <= since) {
                        continue;
                    }
                    j.beginObject().field("name", key.name()).field("rank", key.rank()).field("value", p.value());
                    j.name("step").value(p.step() < 0 ? null : p.step()).field("timeMillis", p.timeMillis());
                    j.endObject();
                }
            });
            j.endArray();
            j.name("stalls").beginArray();
            for (RankSnapshot.Stall st : stalls) {
                j.beginObject().field("op", st.op()).name("missingRanks").beginArray();
                for (int m : st.missingRanks()) {
                    j.value(m);
                }
                j.endArray().field("seconds", st.seconds()).endObject();
            }
            j.endArray();
            j.name("events").beginArray();
            for (Event e : events) {
                j.beginObject().field("timeMillis", e.timeMillis()).field("kind", e.kind()).name("rank")
                        .value(e.rank()).field("message", e.message()).endObject();
            }
            j.endArray();
            return j.endObject().toString();
        }
    }

    private void rankJson(Json j, Rank r, long now) {
        RankSnapshot s = r.latest;
        double collective = s == null ? 0 : s.collectiveNanos() / 1e9;
        double alive = s == null ? 0 : Math.max(0, (s.timeMillis() - r.startedMillis) / 1000.0);
        j.beginObject().field("rank", r.rank).field("host", r.host).field("pid", r.pid).field("state", r.state)
                .field("ops", s == null ? 0 : s.ops()).field("collectiveSeconds", collective)
                .field("betweenSeconds", Math.max(0, alive - collective)).field("bytes", s == null ? 0 : s.bytes());
        j.name("lastOp").value(s == null || s.lastOp().isEmpty() ? null : s.lastOp());
        j.name("lastOpAgoSeconds").value(s == null || s.lastOpEndMillis() <= 0 ? null
                : Math.max(0, (now - s.lastOpEndMillis()) / 1000.0));
        j.field("latenessSeconds", r.latenessSeconds)
                .field("coordinatorLatenessSeconds", r.coordinatorLatenessSeconds)
                .field("collectiveLatenessSeconds", r.collectiveLatenessSeconds).field("lastCount", r.lastCount)
                .field("straggler", r.straggler).field("resets", s == null ? 0 : s.resets());
        j.name("exitCode").value(r.exitCode).field("cause", r.cause);
        j.name("output").beginArray();
        r.output.forEach(j::value);
        j.endArray().endObject();
    }

    /**
     * The view in Prometheus' text exposition format 0.0.4: the job's state and size, and per rank (labelled
     * {@code rank} and {@code host}) its liveness, ops, time in collectives, bytes, lateness, straggler flag, resets,
     * and the newest value of each metric its program reports ({@code kolo_metric{name=...}}).
     */
    public String prometheus() {
        synchronized (lock) {
            judge();
            Prometheus p = new Prometheus();
            p.family("kolo_job_state", "gauge", "1 for the job's current state (RUNNING, SUCCEEDED, FAILED)");
            for (String s : List.of(RUNNING, SUCCEEDED, FAILED)) {
                p.sample("kolo_job_state", s.equals(state) ? 1 : 0, "state", s);
            }
            p.family("kolo_job_ranks", "gauge", "The job's number of ranks");
            p.sample("kolo_job_ranks", size);
            p.family("kolo_job_generation", "gauge", "The elastic job's generation (0 for a static job)");
            p.sample("kolo_job_generation", generation);
            p.family("kolo_job_elapsed_seconds", "gauge", "Seconds since the job started");
            p.sample("kolo_job_elapsed_seconds", (now() - startedAtMillis) / 1000.0);
            p.family("kolo_job_stalls", "gauge", "Ops some ranks submitted and others have not, for long");
            p.sample("kolo_job_stalls", stalls.size());
            Double progress = progress();
            if (progress != null) {
                p.family("kolo_job_progress_ratio", "gauge", "The program's reported progress, 0 to 1");
                p.sample("kolo_job_progress_ratio", progress);
            }
            rankFamily(p, "kolo_rank_up", "gauge", "1 while the rank runs", r -> r.ended() ? 0 : 1);
            rankFamily(p, "kolo_rank_ops_total", "counter", "Collective ops the rank completed",
                    r -> r.latest == null ? 0 : r.latest.ops());
            rankFamily(p, "kolo_rank_collective_seconds_total", "counter", "Seconds the rank spent inside collectives",
                    r -> r.latest == null ? 0 : r.latest.collectiveNanos() / 1e9);
            rankFamily(p, "kolo_rank_bytes_total", "counter", "Payload bytes the rank contributed or moved",
                    r -> r.latest == null ? 0 : r.latest.bytes());
            rankFamily(p, "kolo_rank_lateness_seconds_total", "counter",
                    "Seconds the other ranks waited for this rank in the ops the coordinator saw (outside the response"
                            + " cache)", r -> r.coordinatorLatenessSeconds);
            rankFamily(p, "kolo_rank_collective_lateness_seconds", "gauge",
                    "Seconds the other ranks waited for this rank in every op, estimated from the ranks' time in"
                            + " collectives", r -> r.collectiveLatenessSeconds);
            rankFamily(p, "kolo_rank_last_total", "counter", "Ops this rank was the last to submit", r -> r.lastCount);
            rankFamily(p, "kolo_rank_straggler", "gauge", "1 while the others keep waiting for this rank",
                    r -> r.straggler ? 1 : 0);
            rankFamily(p, "kolo_rank_resets_total", "counter", "Elastic resets the rank has been through",
                    r -> r.latest == null ? 0 : r.latest.resets());
            p.family("kolo_rank_exit_code", "gauge", "The rank's exit code, once it exited");
            for (Rank r : ranks.values()) {
                if (r.exitCode != null) {
                    p.sample("kolo_rank_exit_code", r.exitCode, "rank", Integer.toString(r.rank), "host", r.host);
                }
            }
            p.family("kolo_metric", "gauge", "The newest value of each metric the program reports with Kolo.report");
            metrics.forEach((key, points) -> {
                if (!points.isEmpty()) {
                    Rank r = ranks.get(key.rank());
                    p.sample("kolo_metric", points.getLast().value(), "name", key.name(), "rank",
                            Integer.toString(key.rank()), "host", r == null ? "" : r.host);
                }
            });
            return p.toString();
        }
    }

    private void rankFamily(Prometheus p, String name, String type, String help,
                            java.util.function.ToDoubleFunction<Rank> value) {
        p.family(name, type, help);
        for (Rank r : ranks.values()) {
            p.sample(name, value.applyAsDouble(r), "rank", Integer.toString(r.rank), "host", r.host);
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

    private List<String> hosts() {
        Set<String> hosts = new LinkedHashSet<>();
        for (Rank r : ranks.values()) {
            if (!r.host.isEmpty()) {
                hosts.add(r.host);
            }
        }
        return new ArrayList<>(hosts);
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
        events.addLast(new Event(System.currentTimeMillis(), kind, rank, message));
    }
}
