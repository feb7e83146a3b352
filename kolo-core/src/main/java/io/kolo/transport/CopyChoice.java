package io.kolo.transport;

import java.util.Arrays;

/**
 * Picks, message by message, how a message of {@link ShmWire#DIRECT_MIN_BYTES} or more from native memory travels
 * over shared memory, at every size: read once straight out of the sender's memory by the kernel
 * ({@link CrossMemory}), or copied twice through the ring. Neither wins everywhere, at any size, and the winner
 * changes while a job runs: on a VM whose memory changes speed from one minute to the
 * next, the ring wins in one mode and the single copy in the other ({@code kolo bench allreduce -np 2 -x
 * KOLO_SHM_SINGLE_COPY=1} against {@code =0}, alternated; docs/performance.md, "Measured constants").
 *
 * <p>So the sender measures both, per power-of-two size class, in probes: a few messages as single copies, then as
 * many through the ring, the first of each not counted (they pay for the switch; measured, the calls right after one
 * cost up to twice the steady ones). A probe's length is bounded in bytes, not in messages
 * ({@link #settling}, {@link #measured}): the settling messages carry about one ring of bytes (the ring's memory, left
 * cold by the single copies, warms once through), at least {@link #MIN_SETTLE} and at most {@link #MAX_SETTLE}; the
 * measured ones about {@link #SAMPLE_BYTES}, at least {@link #MIN_SAMPLES} and at most {@link #MAX_SAMPLES}. A class
 * of small messages probes {@link #PROBE} messages of each way; one of 16 MiB messages five, so a short run of large
 * messages (a bench's few iterations, a training job's hundred steps of fused gradients) runs mostly the copy chosen,
 * not the probe. A class probes at its first message, then at its first message in each new {@link #EPOCH_NANOS}
 * period of the clock, once {@link #MIN_BETWEEN} probes' lengths (scaled to the class's probe) have passed since its
 * last probe began. Until the next probe, messages go as single copies only if their probe cost less
 * than {@link #DIRECT_BELOW} of the ring's per byte (the median of its counted calls): close calls take the ring, the
 * way a Java array's message always goes (an array has no fixed address the receiver could read: the collector
 * moves it), so that native memory is never slower than arrays by more than the probes cost, and ranks whose
 * measurements differ a little do not choose differently.
 *
 * <p>Why periods of the clock, not counts of messages: a class's messages may come in bursts seconds apart (a bench
 * taking turns with another library, a training loop with one such message per step), and a choice measured before
 * a pause was often wrong after it (on that VM, a class probed every 8,192 messages kept a choice for 2-6 s while
 * the memory changed modes, and a 1 MiB allreduce ran at 0.73-1.29x Open MPI's speed; probing each period, at
 * 1.26-1.41x). Why the periods of one clock, not a time since the rank's own last probe: the ranks
 * of a host share {@link System#nanoTime()}'s clock, so they cross a period's start within the same message, or a
 * message apart when it falls between their calls, which the settling calls absorb; times since each rank's own
 * probes would drift apart from probe to probe.
 *
 * <p>Only the sender chooses: every large message carries a header saying which way it comes, so the receiver needs
 * no agreement. Ranks of a ring send the same sizes in the same order and read the same clock, so their probes start
 * at the same steps: each then measures the ways as all ranks run them together, not a mix.
 * Not thread-safe (one per transport, used by the thread that runs its calls); allocates nothing per message.
 */
final class CopyChoice {
    /** Length of the clock's periods: a class probes again at its first message in a new one. */
    static final long EPOCH_NANOS = 200_000_000L;
    /**
     * Messages of a class of small messages from one probe's start to the next, at least: bounds the probes' share of
     * a class whose messages are rare, to {@code 2 * PROBE / MIN_BETWEEN} of them. Classes with shorter probes wait
     * proportionally fewer messages, the same share.
     */
    static final int MIN_BETWEEN = 512;
    /**
     * Settling messages at the start of a probe of small messages. Not fewer: with 8 (and probes of 16), a 128 KiB
     * allreduce ran at 0.77-1.01x Open MPI's speed against 0.97-1.34x with 16, in three bench runs each taking turns;
     * its 64 KiB messages take 16 to pass once through a 1 MiB ring, whose memory the single copies left cold.
     */
    static final int MAX_SETTLE = 16;
    /** Settling messages however large the messages: one switch's traces outlast the first call after it. */
    static final int MIN_SETTLE = 2;
    /** Measured messages of a probe of small messages. */
    static final int MAX_SAMPLES = 8;
    /** Measured messages however large: a median that one preempted call does not move. */
    static final int MIN_SAMPLES = 3;
    /** Bytes that the measured messages of one probe carry, about: small classes reach {@link #MAX_SAMPLES} first. */
    static final long SAMPLE_BYTES = 8L << 20;
    /** Messages per probe of one way, at most (small messages). */
    static final int PROBE = MAX_SETTLE + MAX_SAMPLES;
    /** The single copy's cost relative to the ring's below which messages go as single copies. */
    static final double DIRECT_BELOW = 0.95;
    private static final int CLASSES = 64;

    private final int[] settle = new int[CLASSES];
    private final int[] probe = new int[CLASSES];
    private final int[] minBetween = new int[CLASSES];
    private final double[] directCost = new double[CLASSES];
    private final double[] ringCost = new double[CLASSES];
    private final long[] count = new long[CLASSES];
    private final long[] probeStart = new long[CLASSES];
    /** The clock's period in which the class's latest probe began. */
    private final long[] probeEpoch = new long[CLASSES];
    private final double[][] samples = new double[CLASSES][MAX_SAMPLES];
    /** The class and the place in its probes of the message last chosen for, so that its time lands in its probe. */
    private int lastClass = -1;
    private int lastStep;

    /** @param ringBytes data bytes of a ring: the settling messages of a probe carry about this many */
    CopyChoice(long ringBytes) {
        for (int c = 0; c < CLASSES; c++) {
            settle[c] = settling(c, ringBytes);
            probe[c] = settle[c] + measured(c);
            minBetween[c] = Math.max(1, MIN_BETWEEN * probe[c] / PROBE);
        }
    }

    /** Settling messages of a probe of class {@code c}: about one ring of bytes. */
    static int settling(int c, long ringBytes) {
        long classBytes = 1L << Math.min(c, 62);
        return Math.clamp((ringBytes + classBytes - 1) / classBytes, MIN_SETTLE, MAX_SETTLE);
    }

    /** Measured messages of a probe of class {@code c}: about {@link #SAMPLE_BYTES}. */
    static int measured(int c) {
        return Math.clamp(SAMPLE_BYTES >> Math.min(c, 62), MIN_SAMPLES, MAX_SAMPLES);
    }

    /** Messages per probe of one way for messages of {@code length} bytes. */
    int probeLength(long length) {
        return probe[sizeClass(length)];
    }

    /** Settling (not measured) messages at the start of each way's probe for messages of {@code length} bytes. */
    int settleLength(long length) {
        return settle[sizeClass(length)];
    }

    /** Messages of {@code length} bytes from one probe's start to the next, at least. */
    int minBetween(long length) {
        return minBetween[sizeClass(length)];
    }

    /**
     * Whether the next message of {@code length} bytes should travel as a single copy.
     *
     * @param nowNanos {@link System#nanoTime()} as the message starts
     */
    boolean direct(long length, long nowNanos) {
        int c = sizeClass(length);
        long n = count[c]++;
        long epoch = Math.floorDiv(nowNanos, EPOCH_NANOS);
        if (n == 0 || (n - probeStart[c] >= minBetween[c] && epoch != probeEpoch[c])) {
            probeStart[c] = n;
            probeEpoch[c] = epoch;
        }
        int step = (int) Math.min(n - probeStart[c], Integer.MAX_VALUE);
        lastClass = c;
        lastStep = step;
        int p = probe[c];
        if (step < p) {
            return true;
        }
        if (step < 2 * p) {
            return false;
        }
        return directCost[c] < DIRECT_BELOW * ringCost[c];
    }

    /** Records that the call that moved the message last chosen for ({@link #direct}) took {@code nanos}. */
    void record(long length, long nanos) {
        int c = lastClass;
        int step = lastStep;
        lastClass = -1;
        if (c < 0) {
            return;
        }
        int p = probe[c];
        if (step >= 2 * p || step % p < settle[c]) {
            return;
        }
        int i = step % p - settle[c];
        int k = p - settle[c];
        double[] measured = samples[c];
        measured[i] = (double) nanos / length;
        if (i == k - 1) {
            Arrays.sort(measured, 0, k);
            double median = k % 2 == 1 ? measured[k / 2] : (measured[k / 2 - 1] + measured[k / 2]) / 2;
            if (step < p) {
                directCost[c] = median;
            } else {
                ringCost[c] = median;
            }
        }
    }

    /** The last probe's cost of the given way for messages of {@code length} bytes, in ns per byte; 0 while unknown. */
    double cost(long length, boolean direct) {
        return (direct ? directCost : ringCost)[sizeClass(length)];
    }

    private static int sizeClass(long length) {
        return 63 - Long.numberOfLeadingZeros(Math.max(1, length));
    }
}
