package io.kolo.engine;

import io.kolo.DataType;
import io.kolo.ReduceOp;

import java.lang.foreign.MemorySegment;

/**
 * One submitted collective: what to do, on which memory, and whom to tell when it is done. Created by the
 * public API, owned by the engine until its listener is called (exactly once, on the thread running the engine's
 * cycle: the engine thread, or a caller driving cycles while it waits).
 */
public final class Op {

    /** Allocates the memory a result of the negotiated shape is written to (allgather, alltoall, reducescatter). */
    @FunctionalInterface
    public interface Outputs {
        MemorySegment allocate(long[] shape);
    }

    /**
     * Says, once the result's shape is negotiated, whether the caller's own output memory ({@link #into}) can take
     * it: every rank learns the shape only then, and a rank whose output does not fit must still take its part.
     */
    @FunctionalInterface
    public interface OutputCheck {
        /** @return why a result of {@code shape} does not fit the output, or null when it does */
        String problem(long[] shape);
    }

    /** Completion callback, called exactly once on the thread that ran the op's cycle. */
    public interface Listener {
        void completed(Op op);

        void failed(Op op, RuntimeException error);
    }

    final OpKind kind;
    String name;
    final DataType type;
    final long[] shape;
    final MemorySegment input;
    ReduceOp reduceOp = ReduceOp.SUM;
    double prescale = 1.0;
    double postscale = 1.0;
    int root;
    long[] splits;
    String group;
    int groupSize;
    /** The process set the op runs in (0: every rank). */
    int processSet;
    Outputs outputs;
    /** Memory the caller keeps for the result (allgather into), or null to have {@link #outputs} allocate it. */
    MemorySegment into;
    OutputCheck intoCheck;
    Listener listener;
    long submittedNanos;
    /** When the engine thread picked it up: the end of its QUEUE span, the start of NEGOTIATE in the timeline. */
    long drainedNanos;
    /** The op submitted before this one, while both wait in the {@link SubmissionQueue}. */
    Op nextSubmitted;
    /** This op's claim on its name, held from submission until it completes or fails. */
    InFlightNames.Slot slot;
    /** The engine made the name up ({@code allreduce.noname.7}): it never comes again. */
    boolean generatedName;
    /** This op's place among the rank's unnamed ops in its set (1, 2, ...), 0 when named (see {@link Request}). */
    long unnamed;

    private Request request;
    private long[] resultShape;
    private MemorySegment result;
    private long[] receivedSplits;
    private int lastJoined = -1;

    private Op(OpKind kind, String name, DataType type, long[] shape, MemorySegment input) {
        this.kind = kind;
        this.name = name;
        this.type = type;
        this.shape = shape.clone();
        this.input = input;
    }

    /**
     * @param name  the op's name, identical on every rank; null to have one generated (then every rank must
     *              submit its unnamed ops in the same order)
     * @param input the tensor's memory (heap or native); in-place ops write their result back into it
     */
    public static Op of(OpKind kind, String name, DataType type, long[] shape, MemorySegment input) {
        return new Op(kind, name, type, shape, input);
    }

    public Op reduce(ReduceOp op, double prescale, double postscale) {
        this.reduceOp = op;
        this.prescale = prescale;
        this.postscale = postscale;
        return this;
    }

    public Op root(int root) {
        this.root = root;
        return this;
    }

    public Op splits(long[] splits) {
        this.splits = splits == null ? null : splits.clone();
        return this;
    }

    /** Marks this op as member of a group negotiated and fused as one unit. */
    public Op group(String group, int groupSize) {
        this.group = group;
        this.groupSize = groupSize;
        return this;
    }

    /**
     * Marks this op as member of a group the caller submitted without a name (its name and the group's were made up
     * from a counter): the whole group takes one place among the rank's unnamed ops, so the coordinator tells a rank's
     * unnamed group from another's plain op in the same place ({@link UnnamedOrder}).
     */
    public Op unnamedGroup(String group, int groupSize) {
        group(group, groupSize);
        this.generatedName = true;
        return this;
    }

    /** Runs the op among the ranks of process set {@code id} (see {@link Engine#addProcessSet}); 0, the default, is every rank. */
    public Op processSet(int id) {
        this.processSet = id;
        return this;
    }

    public int processSet() {
        return processSet;
    }

    public Op outputs(Outputs outputs) {
        this.outputs = outputs;
        return this;
    }

    /**
     * Writes the result into {@code output}, which the caller keeps (allgather); {@code check} is asked first whether
     * the negotiated result fits it. Without a fit the op still runs on this rank (so that no other rank waits for
     * it) and then fails here, saying why.
     */
    public Op into(MemorySegment output, OutputCheck check) {
        this.into = output;
        this.intoCheck = check;
        return this;
    }

    public Op listener(Listener listener) {
        this.listener = listener;
        return this;
    }

    public String name() {
        return name;
    }

    public OpKind kind() {
        return kind;
    }

    /** Shape of the result (allgather, alltoall, reducescatter); the input shape for in-place ops. */
    public long[] resultShape() {
        return resultShape == null ? shape.clone() : resultShape.clone();
    }

    /** Memory holding the result: the input for in-place ops, else what {@link Outputs} allocated. */
    public MemorySegment result() {
        return result == null ? input : result;
    }

    /** Alltoall: rows received from each rank. */
    public long[] receivedSplits() {
        return receivedSplits == null ? null : receivedSplits.clone();
    }

    /** Join: the last rank to join. */
    public int lastJoined() {
        return lastJoined;
    }

    /** This op as sent to the coordinator; built once, on the cycle's thread, when it first goes there. */
    Request request(int rank) {
        Request r = request;
        if (r == null || r.rank() != rank) {
            r = new Request(rank, name, kind, type, reduceOp, shape, prescale, postscale, root, group, groupSize,
                    unnamed);
            request = r;
        }
        return r;
    }

    void setResult(long[] shape, MemorySegment memory) {
        this.resultShape = shape;
        this.result = memory;
    }

    void setReceivedSplits(long[] splits) {
        this.receivedSplits = splits;
    }

    void setLastJoined(int rank) {
        this.lastJoined = rank;
    }
}
