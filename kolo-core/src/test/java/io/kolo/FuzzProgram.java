package io.kolo;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * The engine fuzzer's op sequence: the batches of seed {@code s} are the same on every rank (they depend on nothing
 * else), so ranks in other threads or processes agree on them without talking. A batch is submitted asynchronously and
 * awaited in an order of each rank's own; a join batch has some ranks run allreduces while the others have joined.
 * Like a training loop, most named ops repeat an earlier op of that name (so they run from the response cache, and the
 * small ones with the negotiation), some with only their size or type changed.
 */
final class FuzzProgram {
    /** Sizes in bytes around every threshold an op can cross: the eager payload, the small-message algorithm, the
     * shared-memory direct reads and ring, the fusion buffer. */
    private static final long[] SMALL = {0, 1, 4, 7, 8, 64, 100, 1000, 1024, 4096, 8191, 8192, 8193, 12000};
    private static final long[] MEDIUM = {16384, 32767, 32768, 32769, 65535, 65536, 65537, 98304, 131072, 262144};
    private static final long[] LARGE = {1048575, 1048576, 1048577, 2 * 1048576 + 12, 3 * 1048576};
    private static final String[] NAMES = {"a", "b", "c", "loss", "grad.0", "grad.1", "metric", "w"};
    private static final double[] FLOAT_SCALES = {1.0, 1.0, 0.5, 2.0, 0.1};
    private static final double[] INT_SCALES = {1.0, 1.0, 2.0, -1.0};

    /** One batch: its ops, or a join: the ranks that keep going ({@code active}) and their allreduces. */
    record Batch(int index, List<FuzzOp> ops, boolean join, boolean[] active) {
    }

    private final long seed;
    private final int size;
    private final boolean largeSizes;
    /** The last op of each name: what a repeat repeats. */
    private final java.util.Map<String, FuzzOp> lastByName = new java.util.LinkedHashMap<>();
    private int next;

    FuzzProgram(long seed, int size, boolean largeSizes) {
        this.seed = seed;
        this.size = size;
        this.largeSizes = largeSizes;
    }

    long seed() {
        return seed;
    }

    /** The next batch; batches come in order, since a batch may repeat ops of earlier ones. */
    Batch next() {
        int index = next++;
        Random rnd = new Random(FuzzValues.mix(seed * 31 + index));
        long firstId = (long) index * 64;
        if (rnd.nextInt(12) == 0) {
            return joinBatch(index, rnd, firstId);
        }
        int count = 1 + rnd.nextInt(6);
        List<FuzzOp> ops = new ArrayList<>();
        List<String> used = new ArrayList<>();
        for (int k = 0; k < count; k++) {
            FuzzOp repeat = rnd.nextInt(10) < 6 ? repeatable(rnd, used) : null;
            FuzzOp op;
            if (repeat != null) {
                op = repeat(rnd, repeat, firstId + k);
            } else {
                FuzzOp.Kind kind = pick(rnd);
                String name = rnd.nextInt(4) == 0 || kind == FuzzOp.Kind.BARRIER ? null : freshName(rnd, used, kind);
                op = op(rnd, firstId + k, kind, name, false);
            }
            ops.add(op);
            if (op.name() != null && !op.mismatched()) {
                lastByName.put(op.name(), op);
            }
        }
        return new Batch(index, ops, false, null);
    }

    private Batch joinBatch(int index, Random rnd, long firstId) {
        boolean[] active = new boolean[size];
        for (int r = 0; r < size; r++) {
            active[r] = rnd.nextBoolean();
        }
        List<FuzzOp> ops = new ArrayList<>();
        int count = rnd.nextInt(4);
        for (int k = 0; k < count; k++) {
            FuzzOp.Kind kind = rnd.nextInt(4) == 0 ? FuzzOp.Kind.ALLGATHER : FuzzOp.Kind.ALLREDUCE;
            // Named: the joined ranks skip these, so generated names would drift apart.
            ops.add(op(rnd, firstId + k, kind, "join." + k, true));
        }
        return new Batch(index, ops, true, active);
    }

    /** An earlier op whose name is not yet used in this batch, or null. */
    private FuzzOp repeatable(Random rnd, List<String> used) {
        List<FuzzOp> candidates = new ArrayList<>();
        for (FuzzOp o : lastByName.values()) {
            if (!used.contains(o.name())) {
                candidates.add(o);
            }
        }
        if (candidates.isEmpty()) {
            return null;
        }
        FuzzOp o = candidates.get(rnd.nextInt(candidates.size()));
        used.add(o.name());
        return o;
    }

    /**
     * The same request under the same name with new data; now and then with another size or type (a last batch, a
     * metric that grows), or mismatched on one rank.
     */
    private FuzzOp repeat(Random rnd, FuzzOp o, long id) {
        int change = rnd.nextInt(10);
        long[] shape = o.shape().clone();
        DataType type = o.type();
        if (change == 0 && o.kind() != FuzzOp.Kind.GROUPED) {
            shape[0] = rnd.nextBoolean() ? shape[0] * 17 + 1 : shape[0] / 2;   // grows past the eager limit, or shrinks
        } else if (change == 1) {
            type = DataType.values()[rnd.nextInt(DataType.values().length)];
        }
        long elements = 1;
        for (long d : shape) {
            elements *= d;
        }
        if (elements * type.byteSize() > (largeSizes ? LARGE[LARGE.length - 1] : MEDIUM[MEDIUM.length - 1])) {
            shape[0] = Math.max(1, shape[0] / 64);   // growth compounds over repeats: keep within the run's sizes
        }
        int odd = -1;
        FuzzOp.Mismatch mismatch = null;
        if (change == 2 && o.kind() != FuzzOp.Kind.GROUPED && o.kind() != FuzzOp.Kind.BARRIER) {
            mismatch = mismatchFor(rnd, o.kind(), shape);
            odd = rnd.nextInt(size);
        }
        long[] rows = o.rows();
        if (o.kind() == FuzzOp.Kind.ALLGATHER && change == 0) {
            rows = rows.clone();
            for (int r = 0; r < size; r++) {
                rows[r] = Math.min(rows[r], shape[0]);
            }
        }
        return new FuzzOp(o.kind(), id, o.name(), type, o.op(), o.prescale(), o.postscale(), o.root(), shape, rows,
                o.splits(), o.members(), o.memory(), odd, mismatch);
    }

    private static FuzzOp.Kind pick(Random rnd) {
        int p = rnd.nextInt(100);
        if (p < 45) {
            return FuzzOp.Kind.ALLREDUCE;
        } else if (p < 55) {
            return FuzzOp.Kind.GROUPED;
        } else if (p < 67) {
            return FuzzOp.Kind.ALLGATHER;
        } else if (p < 77) {
            return FuzzOp.Kind.BROADCAST;
        } else if (p < 86) {
            return FuzzOp.Kind.ALLTOALL;
        } else if (p < 96) {
            return FuzzOp.Kind.REDUCESCATTER;
        }
        return FuzzOp.Kind.BARRIER;
    }

    /** A name from a small pool, so names come back with other shapes, types and kinds; unique within a batch. */
    private static String freshName(Random rnd, List<String> used, FuzzOp.Kind kind) {
        String prefix = kind == FuzzOp.Kind.GROUPED ? "group." : "";
        for (int tries = 0; tries < 20; tries++) {
            String n = prefix + NAMES[rnd.nextInt(NAMES.length)];
            if (!used.contains(n)) {
                used.add(n);
                return n;
            }
        }
        String n = prefix + "extra." + used.size();
        used.add(n);
        return n;
    }

    private FuzzOp op(Random rnd, long id, FuzzOp.Kind kind, String name, boolean joined) {
        DataType type = DataType.values()[rnd.nextInt(DataType.values().length)];
        ReduceOp op = CollectivesApiTest.ELEMENTWISE[rnd.nextInt(CollectivesApiTest.ELEMENTWISE.length)];
        double[] scales = type.isInteger() ? INT_SCALES : FLOAT_SCALES;
        double pre = kind == FuzzOp.Kind.ALLREDUCE ? scales[rnd.nextInt(scales.length)] : 1.0;
        double post = kind == FuzzOp.Kind.ALLREDUCE ? scales[rnd.nextInt(scales.length)] : 1.0;
        long elements = Math.max(0, bytes(rnd) / type.byteSize());
        long cols = elements > 0 && rnd.nextBoolean() ? 1 + rnd.nextInt(4) : 1;
        long[] shape = cols > 1 ? new long[]{Math.max(1, elements / cols), cols} : new long[]{elements};
        long[] rows = null;
        long[][] splits = null;
        long[] members = null;
        switch (kind) {
            case ALLGATHER -> {
                rows = new long[size];
                for (int r = 0; r < size; r++) {
                    rows[r] = rnd.nextInt(5) == 0 ? 0 : Math.max(0, shape[0] - rnd.nextInt(3));
                }
            }
            case ALLTOALL -> {
                splits = new long[size][size];
                long perPeer = Math.max(0, shape[0] / size);
                for (int r = 0; r < size; r++) {
                    for (int p = 0; p < size; p++) {
                        splits[r][p] = rnd.nextInt(6) == 0 ? 0 : (perPeer == 0 ? rnd.nextInt(2) : 1 + rnd.nextLong(perPeer));
                    }
                }
            }
            case GROUPED -> {
                members = new long[1 + rnd.nextInt(4)];
                for (int m = 0; m < members.length; m++) {
                    members[m] = Math.max(0, bytes(rnd) / type.byteSize());
                }
            }
            case REDUCESCATTER -> {
                if (rnd.nextInt(4) == 0) {
                    shape[0] = rnd.nextInt(size + 2);   // fewer rows than ranks: some get none
                }
            }
            default -> { }
        }
        int odd = -1;
        FuzzOp.Mismatch mismatch = null;
        if (!joined && rnd.nextInt(10) == 0 && kind != FuzzOp.Kind.BARRIER && kind != FuzzOp.Kind.GROUPED) {
            mismatch = mismatchFor(rnd, kind, shape);
            odd = mismatch == null ? -1 : rnd.nextInt(size);
        }
        FuzzValues.Memory memory = FuzzValues.Memory.values()[rnd.nextInt(FuzzValues.Memory.values().length)];
        return new FuzzOp(kind, id, name, type, op, pre, post, rnd.nextInt(size), shape, rows, splits, members,
                memory, odd, mismatch);
    }

    private FuzzOp.Mismatch mismatchFor(Random rnd, FuzzOp.Kind kind, long[] shape) {
        List<FuzzOp.Mismatch> possible = new ArrayList<>(List.of(FuzzOp.Mismatch.TYPE));
        if (kind == FuzzOp.Kind.ALLREDUCE || kind == FuzzOp.Kind.REDUCESCATTER || kind == FuzzOp.Kind.BROADCAST
                || shape.length > 1) {
            possible.add(FuzzOp.Mismatch.SHAPE);
        }
        if (kind == FuzzOp.Kind.ALLREDUCE || kind == FuzzOp.Kind.REDUCESCATTER) {
            possible.add(FuzzOp.Mismatch.OP);
        }
        if (kind == FuzzOp.Kind.ALLREDUCE) {
            possible.add(FuzzOp.Mismatch.PRESCALE);
        }
        if (kind == FuzzOp.Kind.BROADCAST && size > 1) {
            possible.add(FuzzOp.Mismatch.ROOT);
        }
        return possible.get(rnd.nextInt(possible.size()));
    }

    private long bytes(Random rnd) {
        int p = rnd.nextInt(100);
        if (largeSizes && p < 3) {
            return LARGE[rnd.nextInt(LARGE.length)];
        } else if (p < 20) {
            return MEDIUM[rnd.nextInt(MEDIUM.length)];
        }
        return SMALL[rnd.nextInt(SMALL.length)];
    }
}
