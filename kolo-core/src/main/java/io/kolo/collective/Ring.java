package io.kolo.collective;

import io.kolo.DataType;
import io.kolo.transport.Combiner;
import io.kolo.transport.Transport;

import java.lang.foreign.MemorySegment;

/**
 * Ring reduce-scatter and ring allgather over blocks of a buffer: each step sends one block to rank + 1 while
 * receiving another from rank - 1, so every link carries the same load and the bandwidth term is independent
 * of the number of ranks. Blocks are moved in pipeline chunks so that scratch memory stays bounded and large
 * blocks do not have to arrive whole before they are reduced.
 *
 * <p>Block {@code b} starts at element {@code offsets[b]} and has {@code counts[b]} elements (possibly zero).
 * The {@code shift} argument selects which rank ends up owning which block, so the same loop serves allreduce
 * (owner of block b is b - 1) and the reduce-scatter collective (owner of block b is b).
 */
final class Ring {

    private final Transport transport;
    private final Scratch scratch;
    private final long chunkBytes;
    private final int rank;
    private final int size;
    private final Reducer reducer = new Reducer();

    /** Reduces received bytes into the buffer; type and operation are set per call, so no allocation per step. */
    private static final class Reducer implements Combiner {
        DataType type;
        Reduction op;

        @Override
        public void combine(MemorySegment acc, long accOffset, MemorySegment in, long inOffset, long bytes) {
            Kernels.reduce(acc, accOffset, in, inOffset, bytes / type.byteSize(), type, op);
        }
    }

    Ring(Transport transport, Scratch scratch, long chunkBytes) {
        this.transport = transport;
        this.scratch = scratch;
        this.chunkBytes = chunkBytes;
        this.rank = transport.rank();
        this.size = transport.size();
    }

    /**
     * After return, rank r holds block {@code (r + shift + 1) mod size} reduced over all ranks; the other
     * blocks hold partial results.
     */
    void reduceScatter(MemorySegment buf, long[] offsets, long[] counts, DataType type, Reduction op, int shift) {
        int esz = type.byteSize();
        long chunkElems = Math.max(1, chunkBytes / esz);
        long largest = 0;
        for (int b = 0; b < size; b++) {
            largest = Math.max(largest, counts[b]);
        }
        MemorySegment tmp = scratch.get(Math.min(chunkElems, largest) * esz);
        reducer.type = type;
        reducer.op = op;
        // The received chunk is reduced into this rank's block: staged in tmp, or straight out of the transport's
        // memory where it can (shared memory, one copy fewer).
        steps(buf, offsets, counts, esz, chunkElems, shift, tmp);
    }

    /**
     * On entry rank r holds block {@code (r + shift) mod size}; on return every rank holds every block, each an
     * exact copy of its owner's bytes. Offsets and counts are in units of {@code unitBytes}.
     */
    void allgather(MemorySegment buf, long[] offsets, long[] counts, int unitBytes, int shift) {
        steps(buf, offsets, counts, unitBytes, Math.max(1, chunkBytes / unitBytes), shift, null);
    }

    /**
     * The ring's size - 1 steps: at step s each rank sends block {@code rank + shift - s} to the next rank and receives
     * block {@code rank + shift - s - 1} from the previous one, in chunks of {@code chunkUnits}; with {@code tmp} the
     * received chunks are reduced into the block, without it copied.
     */
    private void steps(MemorySegment buf, long[] offsets, long[] counts, int unitBytes, long chunkUnits, int shift,
                       MemorySegment tmp) {
        int next = (rank + 1) % size;
        int prev = (rank + size - 1) % size;
        for (int s = 0; s < size - 1; s++) {
            int sendBlock = Math.floorMod(rank + shift - s, size);
            int recvBlock = Math.floorMod(rank + shift - s - 1, size);
            long sendCount = counts[sendBlock];
            long recvCount = counts[recvBlock];
            long steps = Math.max(sendCount, recvCount);
            // Sender and receiver cut a block into the same chunks because both derive them from its count alone.
            for (long done = 0; done < steps; done += chunkUnits) {
                long sn = Math.clamp(sendCount - done, 0, chunkUnits) * unitBytes;
                long rn = Math.clamp(recvCount - done, 0, chunkUnits) * unitBytes;
                // Past the end of the shorter block its offset is clamped, so an empty transfer stays in bounds.
                long sendAt = (offsets[sendBlock] + Math.min(done, sendCount)) * unitBytes;
                long recvAt = (offsets[recvBlock] + Math.min(done, recvCount)) * unitBytes;
                if (tmp != null) {
                    transport.sendRecvCombine(next, buf, sendAt, sn, prev, buf, recvAt, rn, unitBytes, tmp, reducer);
                } else {
                    transport.sendRecv(next, buf, sendAt, sn, prev, buf, recvAt, rn);
                }
            }
        }
    }
}
