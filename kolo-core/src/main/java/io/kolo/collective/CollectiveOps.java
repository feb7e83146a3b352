package io.kolo.collective;

import io.kolo.DataType;

import java.lang.foreign.MemorySegment;

/**
 * The collectives the engine can run, over raw memory. The engine calls these and never learns which
 * algorithm (ring, recursive doubling, ...) the implementation picks; the implementation talks to a
 * {@link io.kolo.transport.Transport} and never learns which transport it is.
 *
 * <p>Every rank calls the same method with compatible arguments in the same order (the engine's
 * negotiation guarantees that). Buffers are segments owned by the caller, native or on the Java heap (a tensor
 * reduced where it lies may be a Java array); both work everywhere, native memory is faster. Results are
 * bit-identical on every rank. Implementations do not allocate per call in steady state (scratch
 * memory grows and is reused).
 */
public interface CollectiveOps extends AutoCloseable {

    int rank();

    int size();

    /** In place: {@code count} elements of {@code type} at the start of {@code buf} become the reduction over all ranks. */
    void allreduce(MemorySegment buf, long count, DataType type, Reduction op);

    /**
     * As {@link #allreduce} followed by {@link Kernels#scale} of every element by {@code factor} (AVERAGE's division
     * and a postscale), with the same result. An algorithm where each rank owns a share of the reduced data (the
     * ring) scales only that share, right after reducing it and before sending it on, so the scaling reads and
     * writes 1/size of the buffer, while it is still in cache, instead of the whole buffer once more.
     */
    default void allreduceScaled(MemorySegment buf, long count, DataType type, Reduction op, double factor) {
        allreduce(buf, count, type, op);
        if (factor != 1.0) {
            Kernels.scale(buf, 0, count, type, factor);
        }
    }

    /**
     * In place: {@code count} floating-point elements at the start of {@code buf} become the Adasum of every rank's
     * vector, bit-identical on every rank (see {@code Adasum}).
     */
    void adasum(MemorySegment buf, long count, DataType type);

    /**
     * In place, two independent allreduces in one round of messages: {@code count} elements of {@code type} at the
     * start of {@code buf} under {@code op}, and right after them (at byte {@code count * type.byteSize()}, which
     * must be a multiple of {@code typeB}'s size) {@code countB} elements of {@code typeB} under {@code opB}. For
     * latency-bound callers that would otherwise pay for two rounds: the engine sends a small op's data with its
     * negotiation. Always the latency-optimal algorithm, so keep the whole buffer small.
     */
    void allreducePair(MemorySegment buf, long count, DataType type, Reduction op,
                       long countB, DataType typeB, Reduction opB);

    /**
     * Concatenation in rank order. Block {@code r} has {@code blockBytes[r]} bytes (blocks may differ in size,
     * may be empty) and starts at the sum of the earlier blocks' sizes. On entry this rank's own block is in
     * place; on return every block is.
     */
    void allgatherv(MemorySegment buf, long[] blockBytes);

    /** In place: the first {@code bytes} bytes of {@code buf} on {@code root} are copied to every rank. */
    void broadcast(MemorySegment buf, long bytes, int root);

    /**
     * Personalised exchange: {@code sendBytes[p]} bytes of {@code send} (blocks laid out in peer order) go to
     * peer {@code p}; {@code recvBytes[p]} bytes from peer {@code p} land in {@code recv}, blocks in peer order.
     */
    void alltoallv(MemorySegment send, long[] sendBytes, MemorySegment recv, long[] recvBytes);

    /**
     * In place: {@code buf} holds the whole vector (block {@code r} of {@code blockCounts[r]} elements at the
     * sum of the earlier blocks); on return this rank's block holds the reduction of that block over all ranks.
     * Other blocks are left with unspecified contents.
     */
    void reducescatter(MemorySegment buf, long[] blockCounts, DataType type, Reduction op);

    /** Returns once every rank has entered. */
    void barrier();

    /**
     * Control plane: every rank's byte array arrives at {@code root} (index = rank); others get {@code null}.
     * Allocates; used only for negotiation messages, not on the steady-state path.
     */
    byte[][] gather(byte[] mine, int root);

    /** Control plane: {@code root}'s array is returned on every rank ({@code data} is ignored elsewhere). */
    byte[] broadcast(byte[] data, int root);

    /** Whether {@link #hierarchical} can change anything: the ranks are spread evenly over several hosts. */
    default boolean hierarchyAvailable() {
        return false;
    }

    /**
     * Turns the hierarchical allreduce and allgather on or off from the next call (the autotuner's choice); every
     * rank must switch between the same two calls. Does nothing where {@link #hierarchyAvailable()} is false.
     */
    default void hierarchical(boolean allreduce, boolean allgather) {
    }

    /** Releases scratch memory (the transport is owned and closed by the caller). */
    @Override
    void close();
}
