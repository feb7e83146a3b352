package io.kolo.collective;

import io.kolo.DataType;
import io.kolo.KoloException;
import io.kolo.transport.Transport;

import java.io.ByteArrayOutputStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.util.Objects;

/**
 * The standard {@link CollectiveOps}: picks an algorithm per call from the message size and runs it over any
 * {@link Transport}.
 *
 * <ul>
 *   <li>allreduce: recursive doubling below the small-message threshold (latency-bound), ring reduce-scatter
 *       plus ring allgather at or above it (bandwidth-optimal).</li>
 *   <li>broadcast: binomial tree below the threshold, chunked chain from the root at or above it.</li>
 *   <li>allgatherv and reducescatter: ring; alltoallv: pairwise exchange; barrier: dissemination.</li>
 * </ul>
 *
 * <p>One instance per rank, used from one thread. Scratch memory is native, grows only when a call needs more
 * than any earlier one, and is freed by {@link #close()} (up to 1 MiB: by the garbage collector once the instance is
 * unreachable, see {@link Scratch}); the transport stays open (its owner closes it).
 */
public final class FlatCollectives implements CollectiveOps {

    /** Default threshold below which allreduce and broadcast use their latency-optimal algorithms, for 2 ranks. */
    public static final long DEFAULT_SMALL_MESSAGE_BYTES = 64 * 1024;

    /** As a threshold: {@link #defaultSmallMessageBytes} of the group's size. */
    public static final long AUTO = -1;

    /**
     * The measured crossover between recursive doubling and the ring grows with the number of ranks (recursive
     * doubling needs log2(p) steps, the ring 2(p - 1)): 32 KiB per rank, at most 1 MiB. See docs/algorithms.md.
     */
    public static long defaultSmallMessageBytes(int size) {
        return Math.min(1L << 20, (32L << 10) * Math.max(2, size));
    }

    static final long DEFAULT_RING_CHUNK_BYTES = 1024 * 1024;
    static final long DEFAULT_BROADCAST_CHUNK_BYTES = 256 * 1024;

    private final Transport transport;
    private final int rank;
    private final int size;
    private final long smallMessageBytes;
    /** Sub-groups of an AUTO instance pick their own threshold from their own size. */
    final boolean autoThreshold;
    /** Kept so that sub-group collectives built over this one's transport chunk the same way. */
    final long ringChunkBytes;
    final long broadcastChunkBytes;
    private final Arena controlArena;
    private final Scratch scratch;
    private final Ring ring;
    private final RecursiveDoubling recursiveDoubling;
    private final Adasum adasum;
    private final Broadcast broadcast;
    private final PairwiseExchange exchange;
    private final DisseminationBarrier barrier;
    /** Reused per call so that block layouts cost no allocation. */
    private final long[] blockOffsets;
    private final long[] blockCounts;
    private boolean closed;

    /** Uses {@link #defaultSmallMessageBytes} of the transport's size as the small-message threshold. */
    public FlatCollectives(Transport transport) {
        this(transport, AUTO);
    }

    /**
     * @param smallMessageBytes messages shorter than this use the latency-optimal algorithms, or {@link #AUTO};
     *                          every rank must pass the same value, or ranks would run different algorithms and hang
     */
    public FlatCollectives(Transport transport, long smallMessageBytes) {
        this(transport, smallMessageBytes, DEFAULT_RING_CHUNK_BYTES, DEFAULT_BROADCAST_CHUNK_BYTES);
    }

    /** Chunk sizes are adjustable so that tests can exercise chunking with small buffers. */
    FlatCollectives(Transport transport, long smallMessageBytes, long ringChunkBytes, long broadcastChunkBytes) {
        this.transport = Objects.requireNonNull(transport, "transport");
        if (smallMessageBytes < 0 && smallMessageBytes != AUTO) {
            throw new IllegalArgumentException("smallMessageBytes must be >= 0 or AUTO, got " + smallMessageBytes);
        }
        if (ringChunkBytes < 1 || broadcastChunkBytes < 1) {
            throw new IllegalArgumentException("chunk sizes must be positive");
        }
        this.rank = transport.rank();
        this.size = transport.size();
        this.autoThreshold = smallMessageBytes == AUTO;
        this.smallMessageBytes = autoThreshold ? defaultSmallMessageBytes(size) : smallMessageBytes;
        this.ringChunkBytes = ringChunkBytes;
        this.broadcastChunkBytes = broadcastChunkBytes;
        // Left to the garbage collector: closing a shared arena stops every thread of the JVM (see Scratch).
        this.controlArena = Arena.ofAuto();
        this.scratch = new Scratch();
        this.ring = new Ring(transport, scratch, ringChunkBytes);
        this.recursiveDoubling = new RecursiveDoubling(transport, scratch);
        this.adasum = new Adasum(transport, scratch);
        this.broadcast = new Broadcast(transport, broadcastChunkBytes);
        this.exchange = new PairwiseExchange(transport);
        this.barrier = new DisseminationBarrier(transport, controlArena.allocate(2));
        this.blockOffsets = new long[size];
        this.blockCounts = new long[size];
    }

    @Override
    public int rank() {
        return rank;
    }

    @Override
    public int size() {
        return size;
    }

    @Override
    public void allreduce(MemorySegment buf, long count, DataType type, Reduction op) {
        checkOpen();
        checkReduction(type, op);
        checkRange(buf, 0, count, type.byteSize(), "buf");
        allreduceAt(buf, 0, count, type, op, 1.0);
    }

    @Override
    public void adasum(MemorySegment buf, long count, DataType type) {
        checkOpen();
        if (!type.isFloatingPoint()) {
            throw new IllegalArgumentException("Adasum combines floating-point tensors, not " + type);
        }
        checkRange(buf, 0, count, type.byteSize(), "buf");
        adasum.allreduce(buf, count, type);
    }

    @Override
    public void allreducePair(MemorySegment buf, long count, DataType type, Reduction op,
                              long countB, DataType typeB, Reduction opB) {
        checkOpen();
        checkReduction(type, op);
        long bytesA = count * type.byteSize();
        if (countB > 0) {
            checkReduction(typeB, opB);
            if (bytesA % typeB.byteSize() != 0) {
                throw new IllegalArgumentException("the second run starts at byte " + bytesA
                        + ", not a multiple of " + typeB + "'s " + typeB.byteSize() + " bytes");
            }
            checkRange(buf, bytesA, countB, typeB.byteSize(), "buf");
        }
        checkRange(buf, 0, count, type.byteSize(), "buf");
        if (size > 1) {
            recursiveDoubling.allreduce(buf, 0, count, type, op, countB, typeB, opB);
        }
    }

    /**
     * Allreduce of the {@code count} elements starting at element {@code first} of {@code buf}, each then scaled by
     * {@code factor} (1: not scaled), for callers that reduce one block of a larger buffer (the hierarchical
     * algorithm) without slicing it. Arguments are checked by the caller.
     */
    void allreduceAt(MemorySegment buf, long first, long count, DataType type, Reduction op, double factor) {
        checkOpen();
        boolean exchange = size > 1 && count > 0;
        if (exchange && count * type.byteSize() >= smallMessageBytes) {
            ringAllreduce(buf, first, count, type, op, factor);
            return;
        }
        // Recursive doubling leaves every rank the whole reduced block, so each scales all of it.
        if (exchange) {
            recursiveDoubling.allreduce(buf, first * type.byteSize(), count, type, op);
        }
        if (factor != 1.0) {
            Kernels.scale(buf, first * type.byteSize(), count, type, factor);
        }
    }

    @Override
    public void allreduceScaled(MemorySegment buf, long count, DataType type, Reduction op, double factor) {
        checkOpen();
        checkReduction(type, op);
        checkRange(buf, 0, count, type.byteSize(), "buf");
        allreduceAt(buf, 0, count, type, op, factor);
    }

    /**
     * Ring reduce-scatter, then each rank scales the block it owns by {@code factor} (unless 1) before the ring
     * allgather sends it on: every rank ends with the same scaled values, and the scaling touches 1/size of the data.
     */
    private void ringAllreduce(MemorySegment buf, long first, long count, DataType type, Reduction op, double factor) {
        // Even blocks, the remainder spread one element each over the first blocks.
        long base = count / size;
        long extra = count % size;
        long offset = first;
        for (int b = 0; b < size; b++) {
            blockOffsets[b] = offset;
            blockCounts[b] = base + (b < extra ? 1 : 0);
            offset += blockCounts[b];
        }
        ring.reduceScatter(buf, blockOffsets, blockCounts, type, op, 0);
        if (factor != 1.0) {
            // After a reduce-scatter with shift 0, rank r holds block r + 1 (Ring.reduceScatter).
            int own = (rank + 1) % size;
            Kernels.scale(buf, blockOffsets[own] * type.byteSize(), blockCounts[own], type, factor);
        }
        ring.allgather(buf, blockOffsets, blockCounts, type.byteSize(), 1);
    }

    @Override
    public void allgatherv(MemorySegment buf, long[] blockBytes) {
        checkOpen();
        long total = layout(blockBytes, "blockBytes");
        checkRange(buf, 0, total, 1, "buf");
        if (size == 1) {
            return;
        }
        ring.allgather(buf, blockOffsets, blockCounts, 1, 0);
    }

    /**
     * Ring allgather of blocks at arbitrary byte offsets (block {@code r} is this group's rank {@code r}'s), for
     * callers whose blocks are not laid out back to back (the hierarchical allgather). Checked by the caller.
     */
    void allgatherAt(MemorySegment buf, long[] offsets, long[] bytes) {
        checkOpen();
        if (size > 1) {
            ring.allgather(buf, offsets, bytes, 1, 0);
        }
    }

    /** The small-message threshold this instance was built with. */
    long smallMessageBytes() {
        return smallMessageBytes;
    }

    @Override
    public void broadcast(MemorySegment buf, long bytes, int root) {
        checkOpen();
        checkRoot(root);
        checkRange(buf, 0, bytes, 1, "buf");
        if (size == 1 || bytes == 0) {
            return;
        }
        if (bytes < smallMessageBytes) {
            broadcast.tree(buf, bytes, root);
        } else {
            broadcast.chain(buf, bytes, root);
        }
    }

    @Override
    public void alltoallv(MemorySegment send, long[] sendBytes, MemorySegment recv, long[] recvBytes) {
        checkOpen();
        long sendTotal = layout(sendBytes, "sendBytes");
        long recvTotal = layout(recvBytes, "recvBytes");
        checkRange(send, 0, sendTotal, 1, "send");
        checkRange(recv, 0, recvTotal, 1, "recv");
        if (sendBytes[rank] != recvBytes[rank]) {
            throw new IllegalArgumentException("rank " + rank + " sends itself " + sendBytes[rank]
                    + " bytes but expects " + recvBytes[rank]);
        }
        exchange.alltoallv(send, sendBytes, recv, recvBytes);
    }

    @Override
    public void reducescatter(MemorySegment buf, long[] blockCounts, DataType type, Reduction op) {
        checkOpen();
        checkReduction(type, op);
        long total = layout(blockCounts, "blockCounts");
        checkRange(buf, 0, total, type.byteSize(), "buf");
        if (size == 1) {
            return;
        }
        ring.reduceScatter(buf, blockOffsets, this.blockCounts, type, op, -1);
    }

    @Override
    public void barrier() {
        checkOpen();
        if (size > 1) {
            barrier.await();
        }
    }

    /**
     * A binomial tree towards {@code root}: each rank hears from at most log2(n) others and passes its subtree's
     * messages on at once, so no rank (the root least of all) needs a connection to every other.
     */
    @Override
    public byte[][] gather(byte[] mine, int root) {
        checkOpen();
        Objects.requireNonNull(mine, "mine");
        checkRoot(root);
        // Ranks relative to the root; a subtree is the run of relative ranks [me, me + its size), each message framed as
        // its length and its bytes, in relative-rank order.
        int me = (rank - root + size) % size;
        ByteArrayOutputStream subtree = new ByteArrayOutputStream();
        frame(subtree, mine);
        MemorySegment header = MemorySegment.ofArray(new long[1]);
        for (int mask = 1; mask < size; mask <<= 1) {
            if ((me & mask) != 0) {
                byte[] up = subtree.toByteArray();
                header.set(ValueLayout.JAVA_LONG, 0, up.length);
                int parent = (me - mask + root) % size;
                transport.send(parent, header, 0, Long.BYTES);
                transport.send(parent, MemorySegment.ofArray(up), 0, up.length);
                return null;
            }
            if (me + mask < size) {
                int child = (me + mask + root) % size;
                transport.recv(child, header, 0, Long.BYTES);
                byte[] part = new byte[checkedLength(header.get(ValueLayout.JAVA_LONG, 0), child)];
                transport.recv(child, MemorySegment.ofArray(part), 0, part.length);
                subtree.writeBytes(part);
            }
        }
        byte[][] all = new byte[size][];
        ByteBuffer in = ByteBuffer.wrap(subtree.toByteArray());
        for (int relative = 0; relative < size; relative++) {
            int from = (relative + root) % size;
            if (in.remaining() < Integer.BYTES) {
                throw new KoloException("the gather to rank " + root + " ended before rank " + from + "'s message");
            }
            int length = in.getInt();
            if (length < 0 || length > in.remaining()) {
                throw new KoloException("rank " + from + " announced an impossible message length " + length);
            }
            all[from] = new byte[length];
            in.get(all[from]);
        }
        return all;
    }

    private static void frame(ByteArrayOutputStream out, byte[] message) {
        out.writeBytes(ByteBuffer.allocate(Integer.BYTES).putInt(message.length).array());
        out.writeBytes(message);
    }

    @Override
    public byte[] broadcast(byte[] data, int root) {
        checkOpen();
        checkRoot(root);
        if (rank == root) {
            Objects.requireNonNull(data, "data");
        }
        if (size == 1) {
            return data.clone();
        }
        MemorySegment header = MemorySegment.ofArray(new long[] {rank == root ? data.length : 0});
        broadcast.tree(header, Long.BYTES, root);
        byte[] result = rank == root ? data.clone() : new byte[checkedLength(header.get(ValueLayout.JAVA_LONG, 0), root)];
        broadcast(MemorySegment.ofArray(result), result.length, root);
        return result;
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        scratch.close();
    }

    @Override
    public String toString() {
        return "FlatCollectives[rank " + rank + " of " + size + ", small < " + smallMessageBytes + " B]";
    }

    /** Fills {@link #blockOffsets} and {@link #blockCounts} from per-rank sizes and returns their sum. */
    private long layout(long[] sizes, String name) {
        Objects.requireNonNull(sizes, name);
        if (sizes.length != size) {
            throw new IllegalArgumentException(name + " has " + sizes.length + " entries, expected one per rank ("
                    + size + ")");
        }
        long total = 0;
        for (int b = 0; b < size; b++) {
            if (sizes[b] < 0) {
                throw new IllegalArgumentException(name + "[" + b + "] is negative: " + sizes[b]);
            }
            blockOffsets[b] = total;
            blockCounts[b] = sizes[b];
            total = Math.addExact(total, sizes[b]);
        }
        return total;
    }

    private void checkOpen() {
        if (closed) {
            throw new IllegalStateException("collectives of rank " + rank + " are closed");
        }
    }

    private void checkRoot(int root) {
        if (root < 0 || root >= size) {
            throw new IllegalArgumentException("root " + root + " out of range [0, " + size + ")");
        }
    }

    private static void checkReduction(DataType type, Reduction op) {
        Objects.requireNonNull(type, "type");
        Objects.requireNonNull(op, "op");
        if (!Kernels.isDefined(type, op)) {
            throw new IllegalArgumentException(op + " is not defined for " + type);
        }
    }

    private static void checkRange(MemorySegment seg, long offset, long count, int unitBytes, String name) {
        Objects.requireNonNull(seg, name);
        if (count < 0) {
            throw new IllegalArgumentException(name + ": negative count " + count);
        }
        long bytes = Math.multiplyExact(count, (long) unitBytes);
        if (offset + bytes > seg.byteSize()) {
            throw new IllegalArgumentException(name + " holds " + seg.byteSize() + " bytes, the call needs " + bytes);
        }
    }

    private static int checkedLength(long length, int from) {
        if (length < 0 || length > Integer.MAX_VALUE - 8) {
            throw new KoloException("rank " + from + " announced an impossible message length " + length);
        }
        return (int) length;
    }
}
