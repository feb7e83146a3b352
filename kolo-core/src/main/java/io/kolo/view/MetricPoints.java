package io.kolo.view;

import java.lang.invoke.VarHandle;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * The newest {@link RankSnapshot#MAX_POINTS} metric points a rank's program reported ({@code Kolo.report}), the one
 * owner of them: any thread adds, without a lock and without allocating (a ring of preallocated slots, each guarded by
 * the number of the point it holds, written last); the reporter's thread reads the newest ones once per interval. A
 * reader never sees a half-written point: it drops a slot that changed while it read it.
 */
public final class MetricPoints {
    private static final int SLOTS = RankSnapshot.MAX_POINTS;
    private static final int MASK = SLOTS - 1;
    /** A slot being written: no point has this number. */
    private static final long WRITING = -1;

    /** The last point's number; points are numbered from 1. */
    private final AtomicLong last = new AtomicLong();
    /** Per slot, the number of the point it holds (0: none yet, {@link #WRITING}: being written). */
    private final AtomicLongArray holds = new AtomicLongArray(SLOTS);
    private final String[] names = new String[SLOTS];
    private final double[] values = new double[SLOTS];
    private final long[] steps = new long[SLOTS];
    private final long[] times = new long[SLOTS];

    static {
        if (Integer.bitCount(SLOTS) != 1) {
            throw new ExceptionInInitializerError("the ring's size must be a power of two");
        }
    }

    /**
     * Adds a point: {@code name}'s value now, at training step {@code step} (-1: none). Never blocks.
     *
     * @throws IllegalArgumentException when {@code name} is null or blank
     */
    public void add(String name, double value, long step) {
        if (name == null || name.isBlank()) {
            throw new IllegalArgumentException("a reported metric needs a name, such as \"loss\"");
        }
        long now = System.currentTimeMillis();
        long seq = last.incrementAndGet();
        int slot = (int) (seq & MASK);
        holds.setRelease(slot, WRITING);
        // The mark above must be seen before any of the point's fields.
        VarHandle.storeStoreFence();
        names[slot] = name;
        values[slot] = value;
        steps[slot] = step;
        times[slot] = now;
        holds.setRelease(slot, seq);
    }

    /** The number of the newest point, 0 before the first. */
    public long lastSeq() {
        return last.get();
    }

    /** The newest points (at most {@link RankSnapshot#MAX_POINTS}), oldest first; a point being written is left out. */
    public List<RankSnapshot.Point> newest() {
        long newest = last.get();
        long from = Math.max(1, newest - SLOTS + 1);
        List<RankSnapshot.Point> points = new ArrayList<>((int) (newest - from + 1));
        for (long seq = from; seq <= newest; seq++) {
            int slot = (int) (seq & MASK);
            if (holds.getAcquire(slot) != seq) {
                continue;
            }
            String name = names[slot];
            double value = values[slot];
            long step = steps[slot];
            long time = times[slot];
            // The fields above must be read before the check below.
            VarHandle.loadLoadFence();
            if (holds.getAcquire(slot) == seq) {
                points.add(new RankSnapshot.Point(seq, name, value, step, time));
            }
        }
        return points;
    }
}
