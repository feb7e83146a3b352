package io.kolo.view;

import io.kolo.bootstrap.KeyValueStore;
import io.kolo.bootstrap.KoloSettings;
import io.kolo.bootstrap.LazyLogger;
import io.kolo.bootstrap.StoreKeys;
import io.kolo.engine.CoordinatorFigures;
import io.kolo.engine.Engine;
import io.kolo.engine.OpActivity;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.IntSupplier;
import java.util.function.Supplier;

/**
 * A rank's side of the job view: one daemon thread that, every {@code KOLO_VIEW_INTERVAL_MS}, reads what the engine
 * has done and the newest points the program reported, and writes them as a {@link RankSnapshot} to the job's store
 * under {@link StoreKeys#view}, where the view holder (the launcher, or rank 0 under mpirun) polls them. Everything it
 * reads is kept by its owners anyway; the data path only adds to counters, and nothing here runs on a caller's thread.
 * It writes a last snapshot when its rank leaves the job.
 */
public final class RankReporter implements AutoCloseable {
    private static final System.Logger LOG = LazyLogger.of(RankReporter.class);
    /** How long {@link #close} waits for the last snapshot to be written: the store may be going too. */
    private static final long CLOSE_WAIT_MILLIS = 2000;

    /** Who the rank is, as its snapshots say. */
    public record Identity(int rank, int size, String host, long pid, int generation) {
    }

    private final KeyValueStore store;
    private final Engine engine;
    private final Identity identity;
    private final long intervalNanos;
    private final Supplier<MetricPoints> points;
    private final IntSupplier resets;
    private final Thread thread;
    private volatile boolean closed;

    private RankReporter(KeyValueStore store, Engine engine, Identity identity, Duration interval,
                         Supplier<MetricPoints> points, IntSupplier resets) {
        this.store = store;
        this.engine = engine;
        this.identity = identity;
        this.intervalNanos = interval.toNanos();
        this.points = points;
        this.resets = resets;
        this.thread = Thread.ofPlatform().daemon().name("kolo-view-" + identity.rank()).unstarted(this::run);
    }

    /**
     * Whether {@code env} asks ranks to publish for the job view: {@code KOLO_VIEW=1}, a dashboard port, or a report
     * file (under {@code mpirun} every rank has the same environment, and rank 0's report needs the others' figures).
     */
    public static boolean wanted(Map<String, String> env) {
        return KoloSettings.VIEW.from(env).equals("on") || KoloSettings.DASHBOARD_PORT.ifSet(env).isPresent()
                || KoloSettings.REPORT.from(env) != null;
    }

    /**
     * Starts publishing {@code engine}'s figures and the current {@code points} to {@code store}, the job's store (an
     * elastic generation's own part of it), every {@code interval}.
     *
     * @param resets the elastic resets this rank has been through
     */
    public static RankReporter start(KeyValueStore store, Engine engine, Identity identity, Duration interval,
                                     Supplier<MetricPoints> points, IntSupplier resets) {
        RankReporter r = new RankReporter(store, engine, identity, interval, points, resets);
        r.thread.start();
        return r;
    }

    private void run() {
        boolean failed = false;
        while (true) {
            boolean last = closed;
            try {
                store.put(StoreKeys.view(identity.rank()), snapshot().toStoreValue());
                failed = false;
            } catch (RuntimeException e) {
                // The store went away (the job ends, rank 0 that served it left) or is briefly unreachable: the view
                // shows this rank's previous snapshot; nothing for the program's output.
                if (!failed) {
                    LOG.log(System.Logger.Level.DEBUG, "rank " + identity.rank() + " could not publish its view: " + e);
                }
                failed = true;
            }
            if (last) {
                return;
            }
            long until = System.nanoTime() + intervalNanos;
            for (long left = intervalNanos; left > 0 && !closed; left = until - System.nanoTime()) {
                // Parked, not interrupted: an interrupt would close the store client's channel under another user.
                LockSupport.parkNanos(this, left);
            }
        }
    }

    /** This rank's snapshot now. */
    RankSnapshot snapshot() {
        long nowMillis = System.currentTimeMillis();
        long nowNanos = System.nanoTime();
        OpActivity a = engine.activity();
        long ops = a.ops();
        String lastOp = a.lastOp();
        long lastEnd = a.lastOpEndNanos();
        long lastEndMillis = ops == 0 ? 0 : nowMillis - TimeUnit.NANOSECONDS.toMillis(nowNanos - lastEnd);
        CoordinatorFigures c = engine.coordinatorFigures();
        long[] lateness = new long[0];
        long[] lastCounts = new long[0];
        List<RankSnapshot.Stall> stalls = List.of();
        if (c != null) {
            lateness = new long[c.size()];
            lastCounts = new long[c.size()];
            for (int r = 0; r < c.size(); r++) {
                lateness[r] = c.latenessNanos(r);
                lastCounts[r] = c.lastCount(r);
            }
            List<RankSnapshot.Stall> now = new ArrayList<>();
            for (CoordinatorFigures.Waiting w : c.waiting()) {
                now.add(new RankSnapshot.Stall(w.op(), w.missingRanks(), w.waitedNanos() / 1e9));
            }
            stalls = now;
        }
        return new RankSnapshot(identity.rank(), identity.size(), identity.host(), identity.pid(),
                identity.generation(), nowMillis, ops, a.collectiveNanos(), a.bytes(), lastOp, lastEndMillis, lateness,
                lastCounts, stalls, resets.getAsInt(), points.get().newest());
    }

    /** Writes a last snapshot (waiting a moment for it) and stops. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        LockSupport.unpark(thread);
        try {
            thread.join(CLOSE_WAIT_MILLIS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
