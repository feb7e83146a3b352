package io.kolo.transport;

import java.util.Arrays;

/**
 * Picks, message by message, how a large message from native memory travels over shared memory: read once straight
 * out of the sender's memory by the kernel ({@link CrossMemory}), or copied twice through the ring. Neither wins
 * everywhere, and the winner changes while a job runs: on the 2-vCPU VM of docs/performance.md, a 1 MiB allreduce
 * took 163 us through the ring against 207 us as single copies in one of the memory's modes, and 362 against
 * 269 us in the other, and the modes swap within seconds. (Open MPI, which reads large messages with the kernel copy
 * too, ran 10-14 % faster with it turned off in the first mode.)
 *
 * <p>So the sender measures both, per power-of-two size class, in probes: {@link #PROBE} messages as single copies,
 * then {@link #PROBE} through the ring, the first {@link #SETTLE} of each not counted (they pay for the switch;
 * measured, the calls right after one cost up to twice the steady ones). Probes start at the class's first message,
 * then after {@link #FIRST_CYCLE} messages, twice as many, and so on up to every {@link #CYCLE}. Until the next
 * probe, messages go through the ring only if its probe cost less than {@link #RING_BELOW} of the single copy's per
 * byte (the median of its counted calls): close calls keep the single copy, so that ranks whose measurements differ a
 * little do not choose differently.
 *
 * <p>Only the sender chooses: every large message carries a header saying which way it comes, so the receiver needs
 * no agreement. Ranks of a ring send the same sizes in the same order, so counting messages per size class puts
 * every rank's probes at the same steps: each then measures the ways as all ranks run them together, not a mix.
 * Not thread-safe (one per transport, used by the thread that runs its calls); allocates nothing per message.
 */
final class CopyChoice {
    /** Messages of a size class from the first probe to the second; the interval doubles from probe to probe... */
    static final int FIRST_CYCLE = 1024;
    /** ...up to this many: early probes may have met a JIT still compiling, later ones cost more than they find. */
    static final int CYCLE = 8192;
    /** Messages per probe of one way. */
    static final int PROBE = 24;
    /** Messages at the start of a probe that are not measured. */
    static final int SETTLE = 16;
    /** The ring's cost relative to the single copy's below which messages go through the ring. */
    static final double RING_BELOW = 0.9;
    private static final int CLASSES = 64;
    private static final int SAMPLES = PROBE - SETTLE;

    private final double[] directCost = new double[CLASSES];
    private final double[] ringCost = new double[CLASSES];
    private final long[] count = new long[CLASSES];
    private final long[] probeStart = new long[CLASSES];
    private final long[] cycle = new long[CLASSES];
    private final double[][] samples = new double[CLASSES][SAMPLES];
    /** The class and the position in its cycle of the message last chosen for, so its time lands in its probe. */
    private int lastClass = -1;
    private int lastStep;

    /** Whether the next message of {@code length} bytes should travel as a single copy. */
    boolean direct(long length) {
        int c = sizeClass(length);
        long n = count[c]++;
        if (n == probeStart[c] + cycle[c]) {
            probeStart[c] = n;
            cycle[c] = cycle[c] == 0 ? FIRST_CYCLE : Math.min(2 * cycle[c], CYCLE);
        }
        int step = (int) Math.min(n - probeStart[c], Integer.MAX_VALUE);
        lastClass = c;
        lastStep = step;
        if (step < PROBE) {
            return true;
        }
        if (step < 2 * PROBE) {
            return false;
        }
        return !(ringCost[c] < RING_BELOW * directCost[c]);
    }

    /** Records that the call that moved the message last chosen for ({@link #direct}) took {@code nanos}. */
    void record(long length, long nanos) {
        int c = lastClass;
        int step = lastStep;
        lastClass = -1;
        if (c < 0 || step >= 2 * PROBE || step % PROBE < SETTLE) {
            return;
        }
        int i = step % PROBE - SETTLE;
        double[] probe = samples[c];
        probe[i] = (double) nanos / length;
        if (i == SAMPLES - 1) {
            Arrays.sort(probe);
            double median = (probe[SAMPLES / 2 - 1] + probe[SAMPLES / 2]) / 2;
            if (step < PROBE) {
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
