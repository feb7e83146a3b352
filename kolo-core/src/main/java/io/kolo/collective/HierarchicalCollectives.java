package io.kolo.collective;

import io.kolo.DataType;
import io.kolo.transport.Transport;

import java.lang.foreign.MemorySegment;
import java.util.Objects;

/**
 * Collectives for several hosts that each run several ranks (ranks packed host by host). Traffic between hosts is
 * what is slow, so each host first combines its ranks' data over the fast local links and only one share per rank
 * crosses between hosts:
 *
 * <ul>
 *   <li>allreduce at or above the small-message threshold: ring reduce-scatter inside the host (local rank
 *       {@code l} ends up owning block {@code l} reduced over the host), allreduce of that block among the ranks
 *       with local rank {@code l} on every host (ring or recursive doubling by its size; a scaled allreduce
 *       scales the block there), ring allgather inside the host. Each rank sends about {@code 2 * n / localSize} bytes between hosts instead of {@code 2 * n}.
 *       Smaller messages are latency-bound and use the flat recursive doubling.</li>
 *   <li>allgatherv (when enabled): ranks with the same local rank exchange their blocks across hosts, then each
 *       host's blocks are gathered inside the host, one host at a time. Ragged and empty blocks are fine because
 *       blocks are addressed by offset, never assumed even.</li>
 *   <li>everything else: the flat {@link FlatCollectives}.</li>
 * </ul>
 *
 * <p>Results stay bit-identical on every rank: each block is reduced once inside its host, then by an allreduce
 * that is itself bit-identical, and copied verbatim afterwards. The order of float additions differs from the
 * flat algorithms, so float results may differ from a flat run in the last bits.
 */
final class HierarchicalCollectives implements CollectiveOps {

    private final FlatCollectives flat;
    private final FlatCollectives local;
    private final FlatCollectives cross;
    private final int rank;
    private final int size;
    private final int localRank;
    private final int localSize;
    private final int host;
    private final int hosts;
    /** Changed only between collectives, by the engine's thread (the autotuner), at the same cycle on every rank. */
    private boolean allreduce;
    private boolean allgather;
    /** Reused per call: block layouts cost no allocation. */
    private final long[] localCounts;
    private final long[] localBytes;
    private final long[] localOffsets;
    private final long[] crossOffsets;
    private final long[] crossBytes;
    private final long[] globalOffsets;
    private boolean closed;

    @Override
    public boolean hierarchyAvailable() {
        return true;
    }

    @Override
    public void hierarchical(boolean allreduce, boolean allgather) {
        this.allreduce = allreduce;
        this.allgather = allgather;
    }

    HierarchicalCollectives(FlatCollectives flat, Transport transport, int localSize, int hosts, boolean allreduce,
                            boolean allgather) {
        this.flat = Objects.requireNonNull(flat, "flat");
        this.rank = flat.rank();
        this.size = flat.size();
        if ((long) localSize * hosts != size || localSize < 1 || hosts < 1) {
            throw new IllegalArgumentException(hosts + " hosts x " + localSize + " ranks do not make " + size);
        }
        this.localSize = localSize;
        this.hosts = hosts;
        this.localRank = rank % localSize;
        this.host = rank / localSize;
        int[] hostMates = new int[localSize];
        for (int l = 0; l < localSize; l++) {
            hostMates[l] = host * localSize + l;
        }
        int[] sameLocalRank = new int[hosts];
        for (int h = 0; h < hosts; h++) {
            sameLocalRank[h] = h * localSize + localRank;
        }
        long small = flat.autoThreshold ? FlatCollectives.AUTO : flat.smallMessageBytes();
        this.local = new FlatCollectives(new SubgroupTransport(transport, hostMates), small, flat.ringChunkBytes,
                flat.broadcastChunkBytes);
        this.cross = new FlatCollectives(new SubgroupTransport(transport, sameLocalRank), small, flat.ringChunkBytes,
                flat.broadcastChunkBytes);
        this.allreduce = allreduce;
        this.allgather = allgather;
        this.localCounts = new long[localSize];
        this.localBytes = new long[localSize];
        this.localOffsets = new long[localSize];
        this.crossOffsets = new long[hosts];
        this.crossBytes = new long[hosts];
        this.globalOffsets = new long[size];
    }

    @Override
    public int rank() {
        return rank;
    }

    @Override
    public int size() {
        return size;
    }

    /** Small by contract, so the flat latency-optimal algorithm, as for small allreduces. */
    @Override
    public void allreducePair(MemorySegment buf, long count, DataType type, Reduction op,
                              long countB, DataType typeB, Reduction opB) {
        checkOpen();
        flat.allreducePair(buf, count, type, op, countB, typeB, opB);
    }

    /**
     * As Horovod does across nodes: the gradients of a host's ranks are summed inside the host (they come from one
     * machine's share of the batch), and the hosts' sums combine by Adasum across hosts. Every local rank runs the
     * cross-host tree on the same sum with its peers of the same local rank, so all end bit-identical.
     */
    @Override
    public void adasum(MemorySegment buf, long count, DataType type) {
        checkOpen();
        if (!allreduce) {
            flat.adasum(buf, count, type);
            return;
        }
        local.allreduce(buf, count, type, Reduction.SUM);
        cross.adasum(buf, count, type);
    }

    @Override
    public void allreduce(MemorySegment buf, long count, DataType type, Reduction op) {
        allreduceScaled(buf, count, type, op, 1.0);
    }

    /**
     * The cross-host allreduce of a local rank's block scales that block only, so the local allgather spreads
     * scaled data and the scaling reads and writes 1/localSize of the buffer (less still where the cross-host
     * allreduce is a ring).
     */
    @Override
    public void allreduceScaled(MemorySegment buf, long count, DataType type, Reduction op, double factor) {
        checkOpen();
        if (!allreduce || count * type.byteSize() < flat.smallMessageBytes() || count < localSize) {
            flat.allreduceScaled(buf, count, type, op, factor);
            return;
        }
        // The flat call checks arguments; do the same before the first transfer so that bad input fails
        // identically whichever algorithm runs.
        if (!Kernels.isDefined(type, op)) {
            throw new IllegalArgumentException(op + " is not defined for " + type);
        }
        if (count * type.byteSize() > buf.byteSize()) {
            throw new IllegalArgumentException("buf holds " + buf.byteSize() + " bytes, the call needs "
                    + count * type.byteSize());
        }
        long base = count / localSize;
        long extra = count % localSize;
        long offset = 0;
        for (int l = 0; l < localSize; l++) {
            localCounts[l] = base + (l < extra ? 1 : 0);
            localOffsets[l] = offset;
            localBytes[l] = localCounts[l] * type.byteSize();
            offset += localCounts[l];
        }
        local.reducescatter(buf, localCounts, type, op);
        cross.allreduceAt(buf, localOffsets[localRank], localCounts[localRank], type, op, factor);
        local.allgatherv(buf, localBytes);
    }

    @Override
    public void allgatherv(MemorySegment buf, long[] blockBytes) {
        checkOpen();
        if (!allgather) {
            flat.allgatherv(buf, blockBytes);
            return;
        }
        Objects.requireNonNull(blockBytes, "blockBytes");
        if (blockBytes.length != size) {
            throw new IllegalArgumentException("blockBytes has " + blockBytes.length
                    + " entries, expected one per rank (" + size + ")");
        }
        long total = 0;
        for (int r = 0; r < size; r++) {
            if (blockBytes[r] < 0) {
                throw new IllegalArgumentException("blockBytes[" + r + "] is negative: " + blockBytes[r]);
            }
            globalOffsets[r] = total;
            total = Math.addExact(total, blockBytes[r]);
        }
        if (total > buf.byteSize()) {
            throw new IllegalArgumentException("buf holds " + buf.byteSize() + " bytes, the call needs " + total);
        }
        // Across hosts: the blocks of the ranks with my local rank, wherever they sit in the buffer.
        for (int h = 0; h < hosts; h++) {
            int r = h * localSize + localRank;
            crossOffsets[h] = globalOffsets[r];
            crossBytes[h] = blockBytes[r];
        }
        cross.allgatherAt(buf, crossOffsets, crossBytes);
        // Inside the host: every host's blocks, host by host; local rank l now holds block l of each host.
        for (int h = 0; h < hosts; h++) {
            for (int l = 0; l < localSize; l++) {
                int r = h * localSize + l;
                localOffsets[l] = globalOffsets[r];
                localBytes[l] = blockBytes[r];
            }
            local.allgatherAt(buf, localOffsets, localBytes);
        }
    }

    @Override
    public void broadcast(MemorySegment buf, long bytes, int root) {
        flat.broadcast(buf, bytes, root);
    }

    @Override
    public void alltoallv(MemorySegment send, long[] sendBytes, MemorySegment recv, long[] recvBytes) {
        flat.alltoallv(send, sendBytes, recv, recvBytes);
    }

    @Override
    public void reducescatter(MemorySegment buf, long[] blockCounts, DataType type, Reduction op) {
        flat.reducescatter(buf, blockCounts, type, op);
    }

    @Override
    public void barrier() {
        flat.barrier();
    }

    @Override
    public byte[][] gather(byte[] mine, int root) {
        return flat.gather(mine, root);
    }

    @Override
    public byte[] broadcast(byte[] data, int root) {
        return flat.broadcast(data, root);
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        local.close();
        cross.close();
        flat.close();
    }

    @Override
    public String toString() {
        return "HierarchicalCollectives[rank " + rank + " of " + size + " = host " + host + " of " + hosts
                + ", local " + localRank + " of " + localSize + (allreduce ? ", allreduce" : "")
                + (allgather ? ", allgather" : "") + "]";
    }

    private void checkOpen() {
        if (closed) {
            throw new IllegalStateException("collectives of rank " + rank + " are closed");
        }
    }
}
