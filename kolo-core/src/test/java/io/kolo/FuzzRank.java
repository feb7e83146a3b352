package io.kolo;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Random;

/**
 * One rank of the engine fuzzer: submits each batch of the program asynchronously (in an order of its own when every op
 * is named), awaits the handles in another order of its own, checks every result against {@link FuzzReference}, checks
 * that every deliberately mismatched op failed here with a message naming it, and then that all ranks hold the same
 * replicated results. Any difference throws an {@link AssertionError} naming the seed, batch, rank and op.
 */
final class FuzzRank {
    private final Communicator comm;
    private final FuzzProgram program;
    private final int rank;
    private final int size;
    private long digest;
    private int mismatches;
    private int joins;

    FuzzRank(Communicator comm, FuzzProgram program) {
        this.comm = comm;
        this.program = program;
        this.rank = comm.rank();
        this.size = comm.size();
    }

    /** What the run exercised, for checking that the fuzzer reaches the paths it is meant to. */
    record Coverage(int batches, int mismatches, int joins, io.kolo.EngineStats engine) {
    }

    Coverage coverage(int batches) {
        return new Coverage(batches, mismatches, joins, comm.stats());
    }

    /** Runs batches until {@code batches} ran or {@code deadlineMillis} (wall clock) passed; returns how many ran. */
    int run(int batches, long deadlineMillis) {
        int b = 0;
        for (; b < batches; b++) {
            // Every rank must stop at the same batch: rank 0's clock decides, broadcast with the digest check.
            FuzzProgram.Batch batch = program.next();
            try {
                if (batch.join()) {
                    runJoin(batch);
                } else {
                    runOps(batch);
                }
                if (agreeAndStop(b, deadlineMillis)) {
                    return b + 1;
                }
            } catch (RuntimeException | AssertionError e) {
                throw new AssertionError("engine fuzz failed: seed " + program.seed() + ", batch " + b + ", rank "
                        + rank + " of " + size + ": " + e.getMessage() + "\n  batch: " + batch.ops()
                        + (batch.join() ? " (join, active " + Arrays.toString(batch.active()) + ")" : ""), e);
            }
        }
        return b;
    }

    /** Every rank's digest of the replicated results must agree; rank 0 also says whether time is up. */
    private boolean agreeAndStop(int batch, long deadlineMillis) {
        long stop = rank == 0 && System.currentTimeMillis() > deadlineMillis ? 1 : 0;
        long[] all = comm.allgather(new long[]{digest, stop});
        for (int r = 0; r < size; r++) {
            if (all[2 * r] != digest) {
                throw new AssertionError("rank " + r + "'s results differ from rank " + rank + "'s after batch "
                        + batch + " (digest " + all[2 * r] + " vs " + digest + ")");
            }
        }
        return all[1] != 0;
    }

    private void runOps(FuzzProgram.Batch batch) {
        List<FuzzOp> ops = batch.ops();
        List<Integer> order = new ArrayList<>();
        for (int k = 0; k < ops.size(); k++) {
            order.add(k);
        }
        Random mine = new Random(FuzzValues.mix(program.seed() + 7919L * batch.index() + rank));
        boolean allNamed = ops.stream().allMatch(o -> o.name() != null && o.kind() != FuzzOp.Kind.BARRIER);
        if (allNamed) {
            Collections.shuffle(order, mine);   // unnamed ops must be submitted in the same order everywhere
        }
        Submitted[] submitted = new Submitted[ops.size()];
        FuzzReference reference = new FuzzReference(program.seed(), size, everyone());
        // Some named allreduces and broadcasts this rank calls blocking, after its asynchronous ones and in program
        // order, so that no two ranks wait for each other: each rank chooses its own, so one op may be blocking here
        // and not elsewhere.
        boolean[] blocking = new boolean[ops.size()];
        for (int k = 0; k < ops.size(); k++) {
            FuzzOp.Kind kind = ops.get(k).kind();
            blocking[k] = (kind == FuzzOp.Kind.ALLREDUCE || kind == FuzzOp.Kind.BROADCAST) && ops.get(k).name() != null
                    && mine.nextBoolean();
        }
        for (int k : order) {
            if (!blocking[k]) {
                submitted[k] = submit(ops.get(k));
            }
        }
        for (int k = 0; k < ops.size(); k++) {
            if (blocking[k]) {
                submitted[k] = callBlocking(ops.get(k));
            }
        }
        Collections.shuffle(order, mine);
        long[] hashes = new long[ops.size()];
        for (int k : order) {
            hashes[k] = finish(ops.get(k), submitted[k], reference, everyone());
        }
        for (long h : hashes) {   // in program order: every rank awaited in an order of its own
            digest = digest * 1_000_003L + h;
        }
    }

    private void runJoin(FuzzProgram.Batch batch) {
        boolean[] active = batch.active();
        if (active[rank]) {
            FuzzReference reference = new FuzzReference(program.seed(), size, active);
            List<Submitted> submitted = new ArrayList<>();
            for (FuzzOp op : batch.ops()) {
                submitted.add(submit(op));
            }
            for (int k = batch.ops().size() - 1; k >= 0; k--) {
                // Only the active ranks ran these: their results stay out of the digest every rank compares.
                finish(batch.ops().get(k), submitted.get(k), reference, active);
            }
        }
        joins++;
        int last = comm.join();
        boolean anyActive = false;
        for (boolean a : active) {
            anyActive |= a;
        }
        if (last < 0 || last >= size || (anyActive && !batch.ops().isEmpty() && !active[last])) {
            throw new AssertionError("join returned " + last + " with active ranks " + Arrays.toString(active));
        }
        digest = digest * 31 + last;
    }

    private boolean[] everyone() {
        boolean[] all = new boolean[size];
        Arrays.fill(all, true);
        return all;
    }

    /** An op's handle and this rank's inputs, kept until the op is checked. */
    private record Submitted(Handle<?> handle, List<Tensor> inputs) {
    }

    private Submitted submit(FuzzOp op) {
        DataType type = op.typeOf(rank);
        long[] shape = op.shapeOf(rank);
        Tensor in = FuzzValues.input(program.seed(), op.id() * 16, rank, type, shape, op.memory());
        return switch (op.kind()) {
            case ALLREDUCE -> new Submitted(comm.allreduceAsync(op.name(), in, op.opOf(rank), op.prescaleOf(rank),
                    op.postscale()), List.of(in));
            case GROUPED -> {
                List<Tensor> members = new ArrayList<>();
                for (int m = 0; m < op.members().length; m++) {
                    members.add(FuzzValues.input(program.seed(), op.id() * 16 + 1 + m, rank, type,
                            new long[]{op.members()[m]}, op.memory()));
                }
                yield new Submitted(comm.groupedAllreduceAsync(op.name(), members, op.op()), members);
            }
            case ALLGATHER -> new Submitted(comm.allgatherAsync(op.name(), in), List.of(in));
            case BROADCAST -> new Submitted(comm.broadcastAsync(op.name(), in, op.rootOf(rank, size)), List.of(in));
            case ALLTOALL -> new Submitted(comm.alltoallAsync(op.name(), in, op.splits()[rank]), List.of(in));
            case REDUCESCATTER -> new Submitted(comm.reducescatterAsync(op.name(), in, op.opOf(rank)), List.of(in));
            case BARRIER -> {
                comm.barrier();
                yield new Submitted(null, List.of());
            }
        };
    }

    /**
     * A named allreduce or broadcast called blocking ({@link Communicator#allreduce(String, Tensor, ReduceOp, double,
     * double)}, {@link Communicator#broadcast(String, Tensor, int)}).
     */
    private Submitted callBlocking(FuzzOp op) {
        Tensor in = FuzzValues.input(program.seed(), op.id() * 16, rank, op.typeOf(rank), op.shapeOf(rank),
                op.memory());
        Handle<Tensor> outcome = new Handle<>(op.name(), java.time.Duration.ZERO);
        try {
            outcome.complete(op.kind() == FuzzOp.Kind.BROADCAST
                    ? comm.broadcast(op.name(), in, op.rootOf(rank, size))
                    : comm.allreduce(op.name(), in, op.opOf(rank), op.prescaleOf(rank), op.postscale()));
        } catch (RuntimeException e) {
            outcome.fail(e);
        }
        return new Submitted(outcome, List.of(in));
    }

    /** Checks one op's outcome; returns a hash of the results every rank holds alike. */
    private long finish(FuzzOp op, Submitted s, FuzzReference reference, boolean[] contributing) {
        if (s.handle() == null) {
            return 0;
        }
        if (op.mismatched()) {
            expectFailure(op, s.handle());
            mismatches++;
            return 1;
        }
        long hash = 0;
        Object result;
        try {
            result = s.handle().await();
        } catch (KoloException e) {
            throw new AssertionError(op + " failed: " + e.getMessage(), e);
        }
        String what = op.toString();
        long base = op.id() * 16;
        switch (op.kind()) {
            case ALLREDUCE -> {
                Tensor t = (Tensor) result;
                reference.checkReduction(base, op.type(), op.op(), op.prescale(), op.postscale(), t.segment(), 0,
                        t.elements(), what);
                hash = hash * 31 + hash(t);
            }
            case GROUPED -> {
                @SuppressWarnings("unchecked") List<Tensor> members = (List<Tensor>) result;
                for (int m = 0; m < members.size(); m++) {
                    Tensor t = members.get(m);
                    reference.checkReduction(base + 1 + m, op.type(), op.op(), 1, 1, t.segment(), 0, t.elements(),
                            what + " member " + m);
                    hash = hash * 31 + hash(t);
                }
            }
            case BROADCAST -> {
                Tensor t = (Tensor) result;
                reference.checkCopy(base, op.type(), op.root(), t.segment(), 0, 0, t.elements(), what);
                hash = hash * 31 + hash(t);
            }
            case ALLGATHER -> {
                Tensor t = (Tensor) result;
                long rowElements = rowElements(op.shape());
                long at = 0;
                for (int r = 0; r < size; r++) {
                    long n = contributing[r] ? op.rows()[r] * rowElements : 0;
                    reference.checkCopy(base, op.type(), r, t.segment(), at, 0, n, what);
                    at += n;
                }
                expectElements(t, at, what);
                hash = hash * 31 + hash(t);
            }
            case ALLTOALL -> {
                AlltoallResult a = (AlltoallResult) result;
                long rowElements = rowElements(op.shape());
                long at = 0;
                for (int p = 0; p < size; p++) {
                    long skip = 0;
                    for (int q = 0; q < rank; q++) {
                        skip += op.splits()[p][q];
                    }
                    long n = op.splits()[p][rank] * rowElements;
                    reference.checkCopy(base, op.type(), p, a.tensor().segment(), at, skip * rowElements, n, what);
                    at += n;
                    if (a.receivedSplits()[p] != op.splits()[p][rank]) {
                        throw new AssertionError(what + ": received splits " + Arrays.toString(a.receivedSplits()));
                    }
                }
                expectElements(a.tensor(), at, what);
            }
            case REDUCESCATTER -> {
                Tensor t = (Tensor) result;
                long rows = op.shape()[0];
                long rowElements = rowElements(op.shape());
                long before = 0;
                for (int q = 0; q < rank; q++) {
                    before += rows / size + (q < rows % size ? 1 : 0);
                }
                long mine = rows / size + (rank < rows % size ? 1 : 0);
                expectElements(t, mine * rowElements, what);
                reference.checkReduction(base, op.type(), op.op(), 1, 1, t.segment(), before * rowElements,
                        mine * rowElements, what);
            }
            case BARRIER -> { }
        }
        return hash;
    }

    private void expectFailure(FuzzOp op, Handle<?> handle) {
        try {
            handle.await();
        } catch (KoloException e) {
            if (e instanceof RankFailedException || e instanceof KoloTimeoutException) {
                throw new AssertionError(op + " failed for the wrong reason: " + e.getMessage(), e);
            }
            String named = op.name() != null ? "'" + op.name() + "'" : ".noname.";
            if (e.getMessage() == null || !e.getMessage().contains(named)) {
                throw new AssertionError(op + " failed without naming the op: " + e.getMessage(), e);
            }
            return;
        }
        throw new AssertionError(op + " succeeded on rank " + rank + " although rank " + op.odd()
                + " submitted another " + op.mismatch());
    }

    private static long rowElements(long[] shape) {
        long n = 1;
        for (int d = 1; d < shape.length; d++) {
            n *= shape[d];
        }
        return n;
    }

    private static void expectElements(Tensor t, long elements, String what) {
        if (t.elements() != elements) {
            throw new AssertionError(what + ": result has " + t.elements() + " elements, expected " + elements
                    + " (shape " + Arrays.toString(t.shape()) + ")");
        }
    }

    private static long hash(Tensor t) {
        MemorySegment s = t.segment();
        long h = t.elements();
        for (long i = 0; i < s.byteSize(); i++) {
            h = h * 31 + s.get(java.lang.foreign.ValueLayout.JAVA_BYTE, i);
        }
        return h;
    }

    /** One rank as a process: args seed, batches, large sizes (true/false), seconds; prints the outcome. */
    public static final class Main {
        public static void main(String[] args) {
            long seed = Long.parseLong(args[0]);
            int batches = Integer.parseInt(args[1]);
            boolean large = Boolean.parseBoolean(args[2]);
            long deadline = System.currentTimeMillis() + 1000L * Long.parseLong(args[3]);
            try (Communicator comm = Communicator.fromEnvironment()) {
                FuzzRank fuzz = new FuzzRank(comm, new FuzzProgram(seed, comm.size(), large));
                int ran = fuzz.run(batches, deadline);
                System.out.println("fuzz ok: " + ran + " batches, " + fuzz.coverage(ran));
            } catch (AssertionError | RuntimeException e) {
                System.out.println(e.getMessage());
                e.printStackTrace(System.out);
                System.exit(1);
            }
        }
    }
}
