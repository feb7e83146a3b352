package io.kolo.engine;

import io.kolo.DataType;
import io.kolo.collective.CollectiveOps;
import io.kolo.collective.Reduction;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;

/**
 * The cycle's vote, Horovod's cache coordinator: a bit vector ANDed across the ranks in one allreduce. Word 0 holds
 * the flags (each set when its condition holds here, so the AND says whether it holds everywhere); then one bit per
 * response-cache position, "my op with that cached response is ready". A cycle may carry the eager op's payload behind
 * the bits, reduced with them in the same exchange.
 *
 * <p>One bit per position, "that cached response still answers my request", is needed only in a cycle where some rank
 * has a request the cache no longer answers: its {@link #ALL_VALID} flag is then clear everywhere after the vote, and
 * every rank exchanges those bits in a second, separate allreduce ({@link #settleValidity}). Other cycles leave them
 * out, which keeps the vote of a small repeated op within one slot of the shared-memory transport.
 *
 * <p>That eager op: a small allreduce, broadcast or allgather repeated under one name (a loss, a metric, a latency
 * benchmark) would cost two rounds of messages per cycle, the bit vector and then the data. So the last such small op
 * that ran from the cache becomes the cycle's eager op: every rank appends a payload of its size to the bit vector (its
 * data when that op is ready here, laid out by {@link EagerPayload}), and both are reduced in one exchange. The op's
 * own cache bit, ANDed over the ranks, says whether every payload was real; if so the op is done, otherwise the
 * payload is dropped and the op goes the usual way. Which op is eager follows from the executed responses, identical
 * on every rank, so the message sizes always agree.
 */
final class CycleVote implements AutoCloseable {
    static final int NOTHING_NEW = 1;
    static final int NO_SHUTDOWN = 2;
    static final int NOT_JOINED = 4;
    static final int ALL_VALID = 8;
    static final int TABLE_EMPTY = 16;
    /**
     * The global set's vote only: no process set of this rank (but the global one) ran or waited for an op lately.
     * Clear somewhere while this rank's sets are quiet: see {@link ProcessSetEngine#peersBusyNanos}.
     */
    static final int OTHER_SETS_QUIET = 32;

    /**
     * Left to the garbage collector: closing a shared arena stops every thread of the JVM for a moment, which with
     * many ranks as threads of one JVM made shutdown quadratic in the ranks (see {@code Scratch}).
     */
    private final Arena arena = Arena.ofAuto();
    private final MemorySegment bits;
    /** "Still answers my request", one bit per position: exchanged only in a cycle where some rank has a stale one. */
    private final MemorySegment validity;
    /** This cycle's vote said every rank's cached responses still answer their requests. */
    private boolean allValid = true;
    /** Positions whose cached response does not answer this rank's new request; cleared every cycle. */
    private final boolean[] invalidLocal;
    private int invalidCount;
    private int words;
    private int high;
    private long agreed;

    CycleVote(int cacheCapacity, long eagerBytes) {
        this.invalidLocal = new boolean[cacheCapacity];
        int cacheWords = (cacheCapacity + 63) / 64;
        this.bits = arena.allocate(8L * (1 + cacheWords) + eagerBytes, 8);
        this.validity = arena.allocate(8L * Math.max(1, cacheWords), 8);
    }

    /** This rank's request at {@code position} is not answered by the cached response there. */
    void invalidate(int position) {
        if (!invalidLocal[position]) {
            invalidLocal[position] = true;
            invalidCount++;
        }
    }

    boolean anyInvalidHere() {
        return invalidCount > 0;
    }

    /**
     * Fills the vector: {@code flags} and the ready bits of {@code parked}, for positions below {@code high} (the cache's
     * high-water mark, the same on every rank, so the vectors' lengths agree).
     */
    void fill(long flags, int high, CachePositionWaits parked) {
        this.high = high;
        words = (high + 63) / 64;
        bits.setAtIndex(ValueLayout.JAVA_LONG, 0, flags);
        for (int w = 0; w < words; w++) {
            bits.setAtIndex(ValueLayout.JAVA_LONG, 1 + w, parked.word(w));
        }
    }

    /**
     * After the exchange: where some rank's {@link #ALL_VALID} flag was clear, every rank ANDs its "still answers my
     * request" bits in a second allreduce (every rank sees the same flags, so all of them take part or none). Then
     * forgets this rank's stale positions, which the cycle goes on to erase everywhere.
     */
    void settleValidity(CollectiveOps ops) {
        allValid = !anyNot(ALL_VALID);
        if (!allValid && words > 0) {
            for (int w = 0; w < words; w++) {
                // Positions at or above the high-water mark hold nothing: valid.
                long valid = -1L;
                if (invalidCount > 0) {
                    for (int b = 0; b < 64 && w * 64 + b < high; b++) {
                        if (invalidLocal[w * 64 + b]) {
                            valid &= ~(1L << b);
                        }
                    }
                }
                validity.setAtIndex(ValueLayout.JAVA_LONG, w, valid);
            }
            ops.allreduce(validity, words, DataType.INT64, Reduction.BAND);
        }
        if (invalidCount > 0) {
            Arrays.fill(invalidLocal, 0, high, false);
            invalidCount = 0;
        }
    }

    /** Sets the ready bit of position {@code p} (below the high-water mark): an op without a parked one is ready. */
    void markReady(int p) {
        long at = 8L * (1 + p / 64);
        bits.set(ValueLayout.JAVA_LONG, at, bits.get(ValueLayout.JAVA_LONG, at) | (1L << (p % 64)));
    }

    /** Where the eager payload lies in the vector. */
    long payloadAt() {
        return 8L * (1 + words);
    }

    MemorySegment bits() {
        return bits;
    }

    /** The exchange of the bits alone. */
    void exchange(CollectiveOps ops) {
        ops.allreduce(bits, 1L + words, DataType.INT64, Reduction.BAND);
        agreed = bits.getAtIndex(ValueLayout.JAVA_LONG, 0);
    }

    /**
     * The exchange of the bits with {@code eager}'s payload behind them ({@link EagerPayload}: this rank's when its op
     * is here, else whatever lies there: the ready bit tells every rank whether all payloads were real).
     */
    void exchange(CollectiveOps ops, Response eager) {
        ops.allreducePair(bits, 1L + words, DataType.INT64, Reduction.BAND,
                EagerPayload.count(eager), EagerPayload.type(eager), EagerPayload.reduction(eager));
        agreed = bits.getAtIndex(ValueLayout.JAVA_LONG, 0);
    }

    /** Whether a flag's condition fails somewhere (e.g. {@code anyNot(NOTHING_NEW)}: some rank has something new). */
    boolean anyNot(int flag) {
        return (agreed & flag) == 0;
    }

    /** Every rank has its op for cached position {@code p} ready. */
    boolean readyEverywhere(int p) {
        return (bits.getAtIndex(ValueLayout.JAVA_LONG, 1 + p / 64) & (1L << (p % 64))) != 0;
    }

    /** The cached response at {@code p} answers every rank's request (after {@link #settleValidity}). */
    boolean validEverywhere(int p) {
        return allValid || (validity.getAtIndex(ValueLayout.JAVA_LONG, p / 64) & (1L << (p % 64))) != 0;
    }

    /** Nothing to free at once: the bits are a few words, and the collector frees them with the vote. */
    @Override
    public void close() {
    }
}
