package io.kolo.transport;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The sender's choice between a single copy and the ring, fed with made-up costs (nanoseconds per byte) and clocks. */
class CopyChoiceTest {
    private static final long LENGTH = 512 << 10;
    private static final long RING = 1 << 20;
    private static final long EPOCH = CopyChoice.EPOCH_NANOS;
    /** Messages per probe of one way and settling messages for {@link #LENGTH} with a {@link #RING} ring. */
    private static final int PROBE = 10;
    private static final int SETTLE = 2;

    /** A way's cost per byte for a call at {@code step} messages into its probe (large past the probe). */
    @FunctionalInterface
    interface Cost {
        double of(boolean direct, long step);
    }

    /**
     * Where a class's probes start, written out independently of the code under test: at the first message, then at
     * the first message of each new clock period once enough messages have passed.
     */
    private static final class Schedule {
        final int minBetween;
        long start;
        long startEpoch;
        long n;
        int probes;

        /** The position of a message sent at {@code now} relative to the latest probe's start. */
        Schedule(int minBetween) {
            this.minBetween = minBetween;
        }

        long next(long now) {
            long epoch = Math.floorDiv(now, EPOCH);
            if (n == 0 || (n - start >= minBetween && epoch > startEpoch)) {
                start = n;
                startEpoch = epoch;
                probes++;
            }
            return n++ - start;
        }
    }

    /** A sender whose messages start {@code gapNanos} apart on a clock that starts at {@code t0}. */
    private static final class Sender {
        final CopyChoice choice = new CopyChoice(RING);
        final Schedule schedule = new Schedule(CopyChoice.MIN_BETWEEN * PROBE / CopyChoice.PROBE);
        final long gapNanos;
        long now;

        Sender(long t0, long gapNanos) {
            this.now = t0;
            this.gapNanos = gapNanos;
        }

        /** Sends {@code messages} messages of {@code length} bytes; returns how many went as a single copy. */
        int send(long length, int messages, Cost cost) {
            int direct = 0;
            for (int i = 0; i < messages; i++) {
                long step = schedule.next(now);
                boolean d = choice.direct(length, now);
                if (step < 2 * PROBE) {
                    assertEquals(step < PROBE, d,
                            "message " + schedule.n + ": probes go single copies first, then through the ring");
                }
                direct += d ? 1 : 0;
                choice.record(length, (long) (cost.of(d, step) * length));
                now += gapNanos;
            }
            return direct;
        }

        int send(long length, int messages, double directCost, double ringCost) {
            return send(length, messages, (d, step) -> d ? directCost : ringCost);
        }
    }

    /**
     * Sends {@code messages} messages {@code gapNanos} apart from {@code t0}, the single copy the cheaper way, and
     * checks that exactly {@code probes} probes ran and only their second halves went through the ring.
     */
    private static void assertProbes(long t0, long gapNanos, int messages, int probes) {
        Sender s = new Sender(t0, gapNanos);
        int direct = s.send(LENGTH, messages, 1.0, 3.0);
        assertEquals(probes, s.schedule.probes);
        assertEquals(messages - probes * PROBE, direct, "only the probes went through the ring");
    }

    @Test
    void probesComeFirstThenOncePerClockPeriod() {
        // 100 us per message: 2,000 messages per period, far more than the minimum between probes. The first
        // message probes, then the first one in each of the 10 periods begun since.
        assertProbes(7 * EPOCH + EPOCH / 3, 100_000, 20_000, 11);
    }

    @Test
    void rareMessagesProbeOnlyAfterTheMinimumCount() {
        // One message per 50 ms, as a training step with one message of the class: a new period every fourth
        // message, but a probe only every MIN_BETWEEN messages.
        assertProbes(0, 50_000_000, 3 * (CopyChoice.MIN_BETWEEN * PROBE / CopyChoice.PROBE) + 2 * PROBE + 10, 4);
    }

    @Test
    void aPauseLongerThanAPeriodProbesAtTheFirstMessageAfterIt() {
        Sender s = new Sender(0, 100_000);
        assertEquals(PROBE, s.send(LENGTH, 1000, 1.0, 0.5), "the ring was cheaper before the pause");
        // Seconds later the single copy is the cheaper way: the first message after the pause starts a probe.
        s.now += 3 * EPOCH;
        int direct = s.send(LENGTH, 2 * PROBE + 100, 1.0, 2.0);
        assertEquals(PROBE + 100, direct);
        assertEquals(2.0, s.choice.cost(LENGTH, false), 1e-3);
        assertEquals(2, s.schedule.probes);
    }

    @Test
    void aClearlyCheaperRingCarriesTheMessagesBetweenProbesAndTheSettlingCallsDoNotCount() {
        Sender s = new Sender(0, 100_000);
        // The ring is cheaper, except right after a switch, when it pays for the other way's traces.
        Cost cost = (d, step) -> d ? 1.0 : step - PROBE < SETTLE ? 50.0 : 0.5;
        int direct = s.send(LENGTH, 10_000, cost);
        assertEquals(s.schedule.probes * PROBE, direct, "only the probes went as single copies");
        assertEquals(0.5, s.choice.cost(LENGTH, false), 1e-3);
        assertEquals(1.0, s.choice.cost(LENGTH, true), 1e-3);
    }

    @Test
    void aSingleCopyOnlyALittleCheaperLeavesTheRingAsArraysTakeIt() {
        Sender s = new Sender(0, 100_000);
        int messages = 10_000;
        int direct = s.send(LENGTH, messages, 0.97, 1.0);
        assertEquals(s.schedule.probes * PROBE, direct, "only the probes went as single copies");
    }

    @Test
    void aRingOnlyALittleCheaperCarriesTheMessagesBetweenProbes() {
        Sender s = new Sender(0, 100_000);
        int messages = 10_000;
        int direct = s.send(LENGTH, messages, 1.0, 0.97);
        assertEquals(s.schedule.probes * PROBE, direct, "only the probes went as single copies");
    }

    @Test
    void whenTheWaysSwapCostsTheChoiceFollowsFromTheNextPeriodOn() {
        Sender s = new Sender(0, 100_000);
        s.send(LENGTH, 1000, 1.0, 1.8);
        // The memory changed mode: the ring now costs a third of what it did and beats the single copy.
        int untilProbe = (int) ((EPOCH - s.now % EPOCH + s.gapNanos - 1) / s.gapNanos);
        int direct = s.send(LENGTH, untilProbe + 2 * PROBE, 1.0, 0.6);
        assertEquals(untilProbe + PROBE, direct, "the old choice holds until the probe");
        assertFalse(s.choice.direct(LENGTH, s.now));
        assertEquals(0.6, s.choice.cost(LENGTH, false), 1e-3);
    }

    @Test
    void oneSlowCallInAProbeDoesNotTurnTheChoice() {
        Sender s = new Sender(0, 100_000);
        // The single copy is cheaper by a little more than the margin, but one of its measured calls was preempted.
        s.send(LENGTH, 2 * PROBE + 10, (d, step) -> d ? (step == SETTLE ? 100.0 : 0.8) : 1.0);
        assertEquals(0.8, s.choice.cost(LENGTH, true), 1e-3);
        assertTrue(s.choice.direct(LENGTH, s.now));
    }

    @Test
    void ranksThatCrossAPeriodAMessageApartStillMeasureEachWayAsBothRunIt() {
        // Two ranks in lockstep; rank 1 starts each message 30 us after rank 0, so at one period's start rank 0's
        // message falls just before it and rank 1's just after: rank 1's probe starts a message later.
        long gap = 100_000;
        long t0 = EPOCH - 2 * CopyChoice.MIN_BETWEEN * gap - 10_000;
        Sender r0 = new Sender(t0, gap);
        Sender r1 = new Sender(t0 + 30_000, gap);
        boolean d0 = true;
        boolean d1 = true;
        // A call's time depends on both ranks' ways: mixed calls cost most, the ring alone least.
        for (int i = 0; i < 4 * CopyChoice.MIN_BETWEEN; i++) {
            d0 = r0.choice.direct(LENGTH, r0.now);
            d1 = r1.choice.direct(LENGTH, r1.now);
            double cost = d0 != d1 ? 3.0 : d0 ? 1.0 : 0.5;
            r0.choice.record(LENGTH, (long) (cost * LENGTH));
            r1.choice.record(LENGTH, (long) (cost * LENGTH));
            r0.now += gap;
            r1.now += gap;
        }
        // Only the settling calls saw the two ways mixed: both measured the ring at 0.5 and chose it.
        assertEquals(0.5, r0.choice.cost(LENGTH, false), 1e-3);
        assertEquals(0.5, r1.choice.cost(LENGTH, false), 1e-3);
        assertFalse(d0);
        assertFalse(d1);
    }

    @Test
    void aProbeCarriesAboutOneRingOfSettlingBytesAndAFewMiBOfMeasuredOnes() {
        CopyChoice choice = new CopyChoice(RING);
        // {message bytes, settling messages, messages per probe of one way}
        long[][] expected = {
                {64 << 10, 16, 24}, {100 << 10, 16, 24}, {128 << 10, 8, 16}, {256 << 10, 4, 12},
                {512 << 10, 2, 10}, {1 << 20, 2, 10}, {2 << 20, 2, 6}, {4 << 20, 2, 5}, {16 << 20, 2, 5},
                {32 << 20, 2, 5}, {1L << 30, 2, 5}};
        for (long[] e : expected) {
            assertEquals(e[1], choice.settleLength(e[0]), "settling messages of " + e[0] + " bytes");
            assertEquals(e[2], choice.probeLength(e[0]), "messages per probe of one way of " + e[0] + " bytes");
        }
        // A larger ring takes more messages to warm.
        CopyChoice big = new CopyChoice(8 << 20);
        assertEquals(8, big.settleLength(1 << 20));
        assertEquals(16, big.settleLength(64 << 10), "at most");
        assertEquals(2, big.settleLength(64 << 20), "at least");
        // Fewer messages per probe wait proportionally fewer before the next: the probes' share stays the same.
        assertEquals(CopyChoice.MIN_BETWEEN, choice.minBetween(64 << 10));
        assertEquals(CopyChoice.MIN_BETWEEN * 5 / CopyChoice.PROBE, choice.minBetween(16 << 20));
    }

    @Test
    void aShortRunOfLargeMessagesMostlyTakesTheCheaperRing() {
        // A 32 MiB allreduce of 2 ranks sends two 16 MiB messages per call; a bench's 16 iterations and 3 warm-ups,
        // or a few training steps, are 38 of them, 2 ms apart. The ring costs half the single copy.
        long large = 16 << 20;
        CopyChoice choice = new CopyChoice(RING);
        long now = 0;
        int direct = 0;
        for (int i = 0; i < 38; i++) {
            boolean d = choice.direct(large, now);
            direct += d ? 1 : 0;
            if (i < 10) {
                assertEquals(i < 5, d, "message " + i + ": five single copies, then five through the ring");
            }
            // The first calls after a switch pay for it: they must not count.
            boolean settling = i % 5 < 2;
            choice.record(large, (long) ((settling ? 10.0 : d ? 1.0 : 0.5) * large));
            now += 2_000_000;
        }
        assertEquals(5, direct, "only the probe's single copies");
        assertEquals(1.0, choice.cost(large, true), 1e-3);
        assertEquals(0.5, choice.cost(large, false), 1e-3);
    }

    @Test
    void aShortRunOfLargeMessagesTakesTheCheaperSingleCopyFromTheEleventhOn() {
        long large = 64 << 20;
        CopyChoice choice = new CopyChoice(RING);
        int direct = 0;
        for (int i = 0; i < 20; i++) {
            boolean d = choice.direct(large, i * 10_000_000L);
            direct += d ? 1 : 0;
            // One measured call of the single copy preempted: the median of three does not move.
            double cost = d ? (i == 3 ? 40.0 : 0.5) : 1.0;
            choice.record(large, (long) (cost * large));
        }
        assertEquals(5 + 10, direct);
        assertEquals(0.5, choice.cost(large, true), 1e-3);
    }

    @Test
    void sizeClassesChooseApart() {
        CopyChoice choice = new CopyChoice(RING);
        // Interleaved, as a fused step's messages of two sizes would be: each class keeps its own probes.
        long now = 0;
        for (int i = 0; i < 1000; i++) {
            boolean d = choice.direct(64 << 10, now);
            choice.record(64 << 10, (long) ((d ? 2.0 : 1.0) * (64 << 10)));
            d = choice.direct(4 << 20, now + 25_000);
            choice.record(4 << 20, (long) ((d ? 1.0 : 2.0) * (4 << 20)));
            now += 50_000;
        }
        assertEquals(1.0, choice.cost(100 << 10, false), 1e-3, "64 and 100 KiB share a class");
        assertEquals(1.0, choice.cost(4 << 20, true), 1e-3);
        assertFalse(choice.direct(64 << 10, now));
        assertTrue(choice.direct(4 << 20, now));
    }
}
