package io.kolo.bench;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Kolo's real bench worker (two in-JVM ranks) taking turns with a peer through a {@link SliceGate}. */
class TakingTurnsTest {

    @TempDir
    Path dir;

    /**
     * Stands in for Open MPI, whose real runs {@code PeersTest} covers: what is under test is who runs when. Each call
     * checks that Kolo is waiting for exactly this slice at that moment.
     */
    private final class WitnessPeer implements Peer {
        final List<Long> calls = Collections.synchronizedList(new ArrayList<>());
        final List<String> problems = Collections.synchronizedList(new ArrayList<>());

        @Override
        public String name() {
            return "witness";
        }

        @Override
        public Series run(Collective collective, ElementType type, int ranks, List<Step> steps) {
            int k = calls.size();
            long bytes = steps.getFirst().bytes();
            if (!Files.exists(dir.resolve("wait." + k))) {
                problems.add("slice " + k + ": the peer ran before Kolo announced it");
            }
            if (Files.exists(dir.resolve("go." + k))) {
                problems.add("slice " + k + ": the peer ran while Kolo's slice was open");
            }
            calls.add(bytes);
            // Distinct numbers per slice, so the merge is visible: 1 us and 3 us medians give 2 us.
            double us = (k % 2 == 0 ? 1 : 3) * 1e-6;
            return Series.ok(name(), List.of(new Measurement(bytes, 5, us, us / 2, us, us * 2)));
        }
    }

    private final WitnessPeer peer = new WitnessPeer();

    /** The harness's side, started on a thread of its own as {@code kolo bench} starts it. */
    private record Harness(SliceGate gate, TakingTurns turns, Thread thread) {
    }

    private Harness startHarness(List<Step> steps, int slices) {
        return startHarness(steps, slices, peer);
    }

    private Harness startHarness(List<Step> steps, int slices, Peer with) {
        SliceGate g = new SliceGate(dir, slices);
        TakingTurns turns = new TakingTurns(g, with, Collective.ALLREDUCE, ElementType.F32, 2, steps);
        return new Harness(g, turns, Thread.ofPlatform().start(turns));
    }

    @Test
    void kolosSlicesAlternateWithThePeersAndBothMergeTheirSlices() throws Exception {
        List<Step> steps = List.of(new Step(1024, 4, 1), new Step(65536, 3, 1));
        Harness h = startHarness(steps, 2);
        TakingTurns turns = h.turns();
        Thread harness = h.thread();
        List<Measurement> kolo;
        try {
            kolo = new InJvmKolo(2, dir).run("tcp", Collective.ALLREDUCE, ElementType.F32, Memory.NATIVE, steps,
                    h.gate());
        } finally {
            turns.stop();
            harness.join();
        }
        assertEquals(List.of(), peer.problems);
        assertEquals(List.of(1024L, 1024L, 65536L, 65536L), peer.calls);
        assertEquals(List.of(8, 6), kolo.stream().map(Measurement::iterations).toList(),
                "Kolo times every slice's iterations");
        Series merged = turns.series();
        assertEquals(Series.Status.OK, merged.status(), merged.reason());
        Measurement small = merged.at(1024);
        assertEquals(10, small.iterations());
        assertEquals(2e-6, small.medianSeconds(), 1e-12);
        assertEquals(0.5e-6, small.minSeconds(), 1e-12);
        assertEquals(6e-6, small.maxSeconds(), 1e-12);
    }

    @Test
    void aKoloRunThatEndsEarlyLeavesThePeerSeriesFailedNotHanging() throws Exception {
        Harness h = startHarness(List.of(new Step(1024, 2, 1), new Step(2048, 2, 1)), 1);
        TakingTurns turns = h.turns();
        Thread harness = h.thread();
        // Kolo announces its first slice and then dies.
        h.gate().announce(0, 1024);
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (!Files.exists(dir.resolve("go.0")) && System.nanoTime() < deadline) {
            Thread.sleep(1);
        }
        turns.stop();
        harness.join(10_000);
        assertTrue(!harness.isAlive(), "the harness thread ended");
        Series s = turns.series();
        assertEquals(Series.Status.FAILED, s.status());
        assertTrue(s.reason().contains("measured 0 of 1 slices at 2KiB"), s.reason());
    }

    @Test
    void aPeerThatThrowsFailsItsSeriesAndKoloStillRunsEverySlice() throws Exception {
        List<Step> steps = List.of(new Step(1024, 2, 1), new Step(2048, 2, 1));
        Peer broken = new Peer() {
            @Override
            public String name() {
                return "broken";
            }

            @Override
            public Series run(Collective collective, ElementType type, int ranks, List<Step> s) {
                throw new IllegalStateException("mpirun vanished");
            }
        };
        Harness h = startHarness(steps, 2, broken);
        List<Measurement> kolo;
        try {
            kolo = new InJvmKolo(2, dir).run("tcp", Collective.ALLREDUCE, ElementType.F32, Memory.NATIVE, steps,
                    h.gate());
        } finally {
            h.turns().stop();
            h.thread().join();
        }
        assertEquals(List.of(4, 4), kolo.stream().map(Measurement::iterations).toList());
        Series s = h.turns().series();
        assertEquals(Series.Status.FAILED, s.status());
        assertTrue(s.reason().contains("mpirun vanished"), s.reason());
    }
}
