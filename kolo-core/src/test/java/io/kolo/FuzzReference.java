package io.kolo;

import java.lang.foreign.MemorySegment;

/**
 * What a collective of the engine fuzzer must produce, computed element by element from every rank's input (which
 * {@link FuzzValues} lets any rank compute), the way the API documents it: nothing is shared with the engine's code.
 */
final class FuzzReference {
    private final long seed;
    private final int size;
    /** Ranks whose input counts; a joined rank contributes zeros to allreduce and no rows to allgather. */
    private final boolean[] contributing;

    FuzzReference(long seed, int size, boolean[] contributing) {
        this.seed = seed;
        this.size = size;
        this.contributing = contributing;
    }

    /**
     * Checks an allreduce (or a grouped member, or a reducescatter's whole reduction restricted to
     * {@code [from, from + count)}) written to {@code out} at element 0.
     */
    void checkReduction(long valueId, DataType type, ReduceOp op, double pre, double post, MemorySegment out,
                        long from, long count, String what) {
        for (long i = 0; i < count; i++) {
            long e = from + i;
            double got = FuzzValues.get(out, type, i);
            if (type.isInteger()) {
                long want = integerReduction(valueId, type, op, pre, post, e);
                if ((long) got != want) {
                    throw new AssertionError(what + ": element " + e + " is " + (long) got + ", expected " + want);
                }
            } else {
                double[] want = floatReduction(valueId, type, op, pre, post, e);
                if (!(Math.abs(got - want[0]) <= FuzzValues.epsilon(type) * want[1] + 1e-30)) {
                    throw new AssertionError(what + ": element " + e + " is " + got + ", expected " + want[0]
                            + " (within " + FuzzValues.epsilon(type) * want[1] + ")");
                }
            }
        }
    }

    private long integerReduction(long valueId, DataType type, ReduceOp op, double pre, double post, long e) {
        long acc = 0;
        boolean first = true;
        for (int r = 0; r < size; r++) {
            long x = contributing[r] ? FuzzValues.wrap((long) (FuzzValues.value(seed, valueId, r, e, type) * pre), type) : 0;
            if (first) {
                acc = x;
                first = false;
                continue;
            }
            acc = switch (op) {
                case SUM, AVERAGE -> FuzzValues.wrap(acc + x, type);
                case PRODUCT -> FuzzValues.wrap(acc * x, type);
                case MIN -> Math.min(acc, x);
                case MAX -> Math.max(acc, x);
                case ADASUM -> throw new AssertionError("the fuzzer draws element-wise ops only");
            };
        }
        if (op == ReduceOp.AVERAGE) {
            acc = FuzzValues.wrap(acc / size, type);
        }
        return FuzzValues.wrap((long) (acc * post), type);
    }

    /** The exact result and the magnitude its rounding error scales with. */
    private double[] floatReduction(long valueId, DataType type, ReduceOp op, double pre, double post, long e) {
        double acc = 0;
        double magnitude = 0;
        for (int r = 0; r < size; r++) {
            double x = contributing[r] ? FuzzValues.value(seed, valueId, r, e, type) * pre : 0;
            acc = r == 0 ? x : switch (op) {
                case SUM, AVERAGE -> acc + x;
                case PRODUCT -> acc * x;
                case MIN -> Math.min(acc, x);
                case MAX -> Math.max(acc, x);
                case ADASUM -> throw new AssertionError("the fuzzer draws element-wise ops only");
            };
            magnitude += Math.abs(x);
        }
        double scale = op == ReduceOp.AVERAGE ? post / size : post;
        acc *= scale;
        magnitude = op == ReduceOp.PRODUCT ? size * Math.abs(acc) : (magnitude + Math.abs(acc)) * Math.abs(scale);
        return new double[]{acc, magnitude};
    }

    /** Checks that {@code out} holds {@code rank}'s input to {@code valueId} from its element {@code from}. */
    void checkCopy(long valueId, DataType type, int rank, MemorySegment out, long outAt, long from, long count,
                   String what) {
        for (long i = 0; i < count; i++) {
            double want = FuzzValues.value(seed, valueId, rank, from + i, type);
            double got = FuzzValues.get(out, type, outAt + i);
            if (got != want) {
                throw new AssertionError(what + ": element " + (outAt + i) + " is " + got + ", expected " + want
                        + " (rank " + rank + "'s element " + (from + i) + ")");
            }
        }
    }
}
