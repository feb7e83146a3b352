package io.kolo.transport;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The sender's choice between a single copy and the ring, fed with made-up costs (nanoseconds per byte). */
class CopyChoiceTest {
    private static final long LENGTH = 512 << 10;

    /** A way's cost per byte for a call at {@code step} messages into its probe (large past the probe). */
    @FunctionalInterface
    interface Cost {
        double of(boolean direct, long step);
    }

    /** Where a class's probes start, written out independently of the code under test. */
    private static final class Schedule {
        long start;
        long cycle;
        long n;

        /** How many probes start within the first {@code messages} messages. */
        static int probes(long messages) {
            Schedule s = new Schedule();
            int probes = 0;
            for (long i = 0; i < messages; i++) {
                probes += s.next() == 0 ? 1 : 0;
            }
            return probes;
        }

        /** The next message's position relative to the latest probe's start. */
        long next() {
            if (n == start + cycle) {
                start = n;
                cycle = cycle == 0 ? CopyChoice.FIRST_CYCLE : Math.min(2 * cycle, CopyChoice.CYCLE);
            }
            return n++ - start;
        }
    }

    /** Sends {@code messages} messages of {@code length} bytes; returns how many went as a single copy. */
    private static int send(CopyChoice choice, long length, int messages, Cost cost, Schedule schedule) {
        int direct = 0;
        for (int i = 0; i < messages; i++) {
            long step = schedule.next();
            boolean d = choice.direct(length);
            direct += d ? 1 : 0;
            choice.record(length, (long) (cost.of(d, step) * length));
        }
        return direct;
    }

    private static int send(CopyChoice choice, long length, int messages, double directCost, double ringCost,
                            Schedule schedule) {
        return send(choice, length, messages, (d, step) -> d ? directCost : ringCost, schedule);
    }

    @Test
    void probesComeFirstThenAtDoublingIntervalsUpToTheLongestCycle() {
        CopyChoice choice = new CopyChoice();
        Schedule schedule = new Schedule();
        int probes = 0;
        long lastStart = -1;
        for (int i = 0; i < 5 * CopyChoice.CYCLE; i++) {
            long step = schedule.next();
            boolean d = choice.direct(LENGTH);
            if (step == 0) {
                probes++;
                if (lastStart >= 0) {
                    assertTrue(schedule.start - lastStart <= CopyChoice.CYCLE);
                }
                lastStart = schedule.start;
            }
            assertEquals(step < CopyChoice.PROBE || step >= 2 * CopyChoice.PROBE, d, "message " + i);
            choice.record(LENGTH, (d ? 1 : 3) * LENGTH);
        }
        // 0, 1024, 3072, 7168, then every 8192: 15360, 23552, 31744, 39936.
        assertEquals(8, probes);
    }

    @Test
    void aClearlyCheaperRingCarriesTheMessagesBetweenProbesAndTheSettlingCallsDoNotCount() {
        CopyChoice choice = new CopyChoice();
        Schedule schedule = new Schedule();
        // The ring is cheaper, except right after a switch, when it pays for the other way's traces.
        Cost cost = (d, step) -> d ? 1.0 : step - CopyChoice.PROBE < CopyChoice.SETTLE ? 50.0 : 0.5;
        int messages = 3 * CopyChoice.CYCLE;
        int direct = send(choice, LENGTH, messages, cost, schedule);
        int probes = Schedule.probes(messages);
        assertEquals(probes * CopyChoice.PROBE, direct, "only the probes went as single copies");
        assertEquals(0.5, choice.cost(LENGTH, false), 1e-3);
        assertEquals(1.0, choice.cost(LENGTH, true), 1e-3);
    }

    @Test
    void aRingOnlyALittleCheaperLeavesTheSingleCopy() {
        CopyChoice choice = new CopyChoice();
        Schedule schedule = new Schedule();
        int messages = 2 * CopyChoice.CYCLE;
        int direct = send(choice, LENGTH, messages, 1.0, 0.95, schedule);
        int probes = Schedule.probes(messages);
        assertEquals(messages - probes * CopyChoice.PROBE, direct, "only the probes went through the ring");
    }

    @Test
    void whenTheWaysSwapCostsTheChoiceFollowsFromTheNextProbeOn() {
        CopyChoice choice = new CopyChoice();
        Schedule schedule = new Schedule();
        send(choice, LENGTH, 8000, 1.0, 1.8, schedule);
        // The memory changed mode: the ring now costs a third of what it did and beats the single copy.
        int untilProbe = (int) (schedule.start + schedule.cycle - schedule.n);
        int direct = send(choice, LENGTH, untilProbe + 2 * CopyChoice.PROBE, 1.0, 0.6, schedule);
        assertEquals(untilProbe + CopyChoice.PROBE, direct, "the old choice holds until the probe");
        assertFalse(choice.direct(LENGTH));
        assertEquals(0.6, choice.cost(LENGTH, false), 1e-3);
    }

    @Test
    void oneSlowCallInAProbeDoesNotTurnTheChoice() {
        CopyChoice choice = new CopyChoice();
        Schedule schedule = new Schedule();
        // The single copy is cheaper by a little more than the margin, but one of its measured calls was preempted.
        Cost cost = (d, step) -> d ? (step == CopyChoice.SETTLE ? 100.0 : 0.8) : 1.0;
        send(choice, LENGTH, 2 * CopyChoice.PROBE + 10, cost, schedule);
        assertEquals(0.8, choice.cost(LENGTH, true), 1e-3);
        assertTrue(choice.direct(LENGTH));
    }

    @Test
    void sizeClassesChooseApart() {
        CopyChoice choice = new CopyChoice();
        Schedule small = new Schedule();
        Schedule large = new Schedule();
        // Interleaved, as a fused step's messages of two sizes would be: each class keeps its own probes.
        for (int i = 0; i < 1000; i++) {
            send(choice, 64 << 10, 1, 2.0, 1.0, small);
            send(choice, 4 << 20, 1, 1.0, 2.0, large);
        }
        assertEquals(1.0, choice.cost(100 << 10, false), 1e-3, "64 and 100 KiB share a class");
        assertEquals(1.0, choice.cost(4 << 20, true), 1e-3);
        assertFalse(choice.direct(64 << 10));
        assertTrue(choice.direct(4 << 20));
    }
}
