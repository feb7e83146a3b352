package io.kolo.engine;

import java.util.List;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * What rank 0, the coordinator of the global set, sees of the other ranks: for each rank, how long the others waited
 * for it (from the first request of an op to its request, in the ops where it was the last to ask) and in how many
 * ops it was last; and the ops that wait now, with the ranks they wait for, as the stall inspector last saw them.
 * Written by the cycle's thread; read by any thread. Ops the response cache answers never reach the coordinator and
 * are not counted here (their ranks agree in the cycle's vote, which says who is ready, not who came last).
 */
public final class CoordinatorFigures {
    /** An op some ranks submitted and others have not, {@code waitedNanos} after the first did. */
    public record Waiting(String op, int[] missingRanks, long waitedNanos) {
    }

    private final AtomicLongArray lateNanos;
    private final AtomicLongArray lastCounts;
    private volatile List<Waiting> waiting = List.of();

    CoordinatorFigures(int size) {
        lateNanos = new AtomicLongArray(size);
        lastCounts = new AtomicLongArray(size);
    }

    /** {@code rank} asked last for an op, {@code nanos} after the first rank did. */
    void last(int rank, long nanos) {
        lateNanos.setRelease(rank, lateNanos.getPlain(rank) + nanos);
        lastCounts.setRelease(rank, lastCounts.getPlain(rank) + 1);
    }

    void waiting(List<Waiting> now) {
        waiting = List.copyOf(now);
    }

    /** The number of ranks. */
    public int size() {
        return lateNanos.length();
    }

    /** How long the others waited for {@code rank}, summed over the ops it was last to ask for. */
    public long latenessNanos(int rank) {
        return lateNanos.getAcquire(rank);
    }

    /** The number of ops {@code rank} was last to ask for (when another rank had asked in an earlier round). */
    public long lastCount(int rank) {
        return lastCounts.getAcquire(rank);
    }

    /** The ops that have waited a second or more for some ranks, when the stall inspector last looked. */
    public List<Waiting> waiting() {
        return waiting;
    }
}
