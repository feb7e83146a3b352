package io.kolo.engine;

import java.util.Arrays;

/**
 * Ops waiting at their response-cache position until every rank has the same op ready, with a bit per position.
 * A cycle visits only the parked positions: a job that has used a thousand names still parks one or two ops per
 * cycle, and scanning every position took about a microsecond per cycle, as long as a whole small allreduce.
 */
final class CachePositionWaits {
    private final Op[] at;
    private final long[] words;
    private int count;
    /** Words at or above this index are zero: {@link #next} scans no further (most jobs park in the first word). */
    private int top;

    CachePositionWaits(int capacity) {
        at = new Op[capacity];
        words = new long[(capacity + 63) / 64];
    }

    Op get(int position) {
        return at[position];
    }

    boolean isEmpty() {
        return count == 0;
    }

    void park(int position, Op op) {
        if (at[position] == null) {
            count++;
            words[position >>> 6] |= 1L << position;
            top = Math.max(top, (position >>> 6) + 1);
        }
        at[position] = op;
    }

    /** Takes the op off its position; returns it, or null if none was parked there. */
    Op remove(int position) {
        Op op = at[position];
        if (op != null) {
            at[position] = null;
            words[position >>> 6] &= ~(1L << position);
            if (--count == 0) {
                top = 0;
            }
        }
        return op;
    }

    /** Word {@code w} of the bit set: bit {@code b} is set when position {@code 64 w + b} holds an op. */
    long word(int w) {
        return words[w];
    }

    /** The first position at or after {@code from} that holds an op, or -1; removing ops meanwhile is fine. */
    int next(int from) {
        int w = from >>> 6;
        if (count == 0 || w >= top) {
            return -1;
        }
        long word = words[w] & (-1L << from);
        while (word == 0) {
            if (++w == top) {
                return -1;
            }
            word = words[w];
        }
        return w * 64 + Long.numberOfTrailingZeros(word);
    }

    /** Takes {@code op} off whatever position holds it. */
    void remove(Op op) {
        for (int p = next(0); p >= 0; p = next(p + 1)) {
            if (at[p] == op) {
                remove(p);
            }
        }
    }

    void clear() {
        Arrays.fill(at, null);
        Arrays.fill(words, 0);
        count = 0;
        top = 0;
    }
}
