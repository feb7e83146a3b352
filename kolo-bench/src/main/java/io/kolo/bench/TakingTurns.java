package io.kolo.bench;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.TimeUnit;

/**
 * The harness's side of a {@link SliceGate}: whenever Kolo announces a slice, runs the peer on that size, then opens
 * the slice. So at every size the two alternate, peer then Kolo, as many times as the gate has slices, and the peer's
 * slices of a size merge into one measurement ({@link Measurement#merge}).
 *
 * <p>Runs on a thread of its own; {@link #series()} is read after that thread has ended.
 */
final class TakingTurns implements Runnable {
    private final SliceGate gate;
    private final Peer peer;
    private final Collective collective;
    private final ElementType type;
    private final int ranks;
    private final List<Step> steps;
    private final Map<Long, List<Measurement>> taken = new LinkedHashMap<>();
    private volatile boolean stopped;
    /** Set once the peer is skipped or failed: later slices open at once. */
    private Series notOk;

    TakingTurns(SliceGate gate, Peer peer, Collective collective, ElementType type, int ranks, List<Step> steps) {
        this.gate = gate;
        this.peer = peer;
        this.collective = collective;
        this.type = type;
        this.ranks = ranks;
        this.steps = steps;
    }

    @Override
    public void run() {
        int total = steps.size() * gate.slices();
        try {
            for (int k = 0; k < total && !stopped; k++) {
                OptionalLong bytes = awaitAnnouncement(k);
                if (bytes.isEmpty()) {
                    return;
                }
                if (notOk == null) {
                    try {
                        runPeer(bytes.getAsLong());
                    } catch (RuntimeException e) {
                        // Kolo's ranks wait for this slice: never leave them hanging because the peer broke.
                        notOk = Series.failed(peer.name(), "taking turns with Kolo: " + e.getMessage());
                    }
                }
                gate.open(k);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** The size of slice {@code k} once Kolo announced it; empty when the turns were stopped first. */
    private OptionalLong awaitAnnouncement(int k) throws InterruptedException {
        OptionalLong bytes;
        while ((bytes = gate.announced(k)).isEmpty() && !stopped) {
            TimeUnit.MILLISECONDS.sleep(1);
        }
        return bytes;
    }

    private void runPeer(long bytes) throws InterruptedException {
        Step step = steps.stream().filter(s -> s.bytes() == bytes).findFirst().orElseThrow(
                () -> new IllegalStateException("Kolo announced a slice of " + bytes + " bytes, not a planned size"));
        Series s = peer.run(collective, type, ranks, List.of(step));
        if (s.status() != Series.Status.OK) {
            notOk = s;
            return;
        }
        taken.computeIfAbsent(bytes, b -> new ArrayList<>()).addAll(s.measurements());
    }

    /** Ends the turns (Kolo finished or failed); slices not announced yet are not waited for. */
    void stop() {
        stopped = true;
    }

    /** The peer's series: every size merged over its slices, or why there is none. */
    Series series() {
        if (notOk != null) {
            return notOk;
        }
        List<Measurement> merged = new ArrayList<>();
        for (Step step : steps) {
            List<Measurement> parts = taken.get(step.bytes());
            if (parts == null || parts.size() != gate.slices()) {
                return Series.failed(peer.name(), "measured " + (parts == null ? 0 : parts.size()) + " of "
                        + gate.slices() + " slices at " + Sizes.format(step.bytes())
                        + " (the Kolo series it takes turns with ended early)");
            }
            merged.add(Measurement.merge(parts));
        }
        return Series.ok(peer.name(), merged);
    }
}
