package io.kolo.engine;

/**
 * The engine's side of the timeline ({@code KOLO_TIMELINE}, written by rank 0): the clock for an op's spans and the
 * spans themselves. Without a timeline every call is a no-op and the clock reads nothing, so tracing costs nothing on
 * the ops' path unless asked for.
 */
final class OpTrace implements AutoCloseable {
    private final Timeline timeline;
    private final boolean markCycles;

    private OpTrace(Timeline timeline, boolean markCycles) {
        this.timeline = timeline;
        this.markCycles = markCycles;
    }

    /**
     * The timeline of process set {@code set}, written by the set's rank 0: {@code KOLO_TIMELINE} itself for the global
     * set, and beside it with the set's id before the extension for the others ({@code timeline.json} →
     * {@code timeline.set2.json}), so that each file is one set's view, as Horovod draws one per controller.
     */
    static OpTrace open(EngineSettings settings, int rank, int set) {
        Timeline t = rank == 0 && settings.timeline() != null ? Timeline.open(fileOf(settings.timeline(), set)) : null;
        return new OpTrace(t, settings.markCycles());
    }

    static java.nio.file.Path fileOf(java.nio.file.Path timeline, int set) {
        return set == 0 ? timeline : JobFiles.tagged(timeline, "set" + set);
    }

    /** The time for the spans, or 0 without a timeline: an eager op's path would otherwise read the clock a dozen times. */
    long clock() {
        return timeline == null ? 0 : System.nanoTime();
    }

    /** Whether a timeline is written: then every op needs its spans, and so its {@link Op}. */
    boolean enabled() {
        return timeline != null;
    }

    /** A cycle that runs ops begins ({@code KOLO_TIMELINE_MARK_CYCLES}). */
    void cycleStart() {
        if (timeline != null && markCycles) {
            timeline.cycleStart();
        }
    }

    /**
     * The spans of a response's ops: QUEUE (waiting for this rank's next cycle), NEGOTIATE (for the other ranks to
     * agree), the copies in and out of the fusion buffer unless {@code direct}, and the collective itself.
     */
    void spans(Response r, PendingOps pending, long negotiated, long t0, long t1, long t2, boolean direct) {
        if (timeline == null) {
            return;
        }
        long end = System.nanoTime();
        String kind = r.kind().name();
        String args = "\"dtype\":\"" + r.type() + "\",\"bytes\":" + r.totalBytes() + ",\"fused\":" + r.names().size();
        for (String name : r.names()) {
            Op op = pending.get(name);
            if (op != null) {
                timeline.span(name, "QUEUE", timeline.micros(op.submittedNanos), timeline.micros(op.drainedNanos), null);
            }
            long drained = op == null ? negotiated : op.drainedNanos;
            timeline.span(name, "NEGOTIATE_" + kind, timeline.micros(drained), timeline.micros(negotiated), null);
            if (!direct) {
                timeline.span(name, "MEMCPY_IN_FUSION_BUFFER", timeline.micros(t0), timeline.micros(t1), null);
            }
            timeline.span(name, kind, timeline.micros(t1), timeline.micros(t2), args);
            if (!direct && t2 < end) {
                timeline.span(name, "MEMCPY_OUT_FUSION_BUFFER", timeline.micros(t2), timeline.micros(end), null);
            }
        }
    }

    /**
     * The spans of an op that failed before or while it ran (the ranks disagreed on it, it stalled, a rank died, the
     * job ended): QUEUE and its negotiation up to now, the error in the negotiation's args. Without them a failed job's
     * timeline ended with its last good op, not the one it failed on.
     */
    void failed(Op op, String error) {
        if (timeline == null) {
            return;
        }
        long now = System.nanoTime();
        long drained = op.drainedNanos == 0 ? now : op.drainedNanos;
        timeline.span(op.name, "QUEUE", timeline.micros(op.submittedNanos), timeline.micros(drained), null);
        timeline.span(op.name, "NEGOTIATE_" + op.kind.name(), timeline.micros(drained), timeline.micros(now),
                "\"error\":\"" + Timeline.escape(String.valueOf(error)) + "\"");
    }

    /** Writes what this cycle added. */
    void flush() {
        if (timeline != null) {
            timeline.flush();
        }
    }

    @Override
    public void close() {
        if (timeline != null) {
            timeline.close();
        }
    }
}
