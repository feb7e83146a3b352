package io.kolo.collective;

import io.kolo.DataType;
import io.kolo.transport.Transport;

import java.lang.foreign.MemorySegment;

/**
 * Latency-optimal allreduce for small messages: log2(p) exchanges of the whole buffer with partners at
 * distance 1, 2, 4, ... Both partners combine the same two operands with a commutative operation, so after
 * each round a whole group of ranks holds bit-identical data.
 *
 * <p>For a size that is not a power of two, the first {@code 2 * extra} ranks pair up: each even one folds its
 * data into the odd one above it, sits out the doubling rounds, and finally receives the result from that
 * partner.
 */
final class RecursiveDoubling {

    private final Transport transport;
    private final Scratch scratch;
    private final int rank;
    private final int size;

    RecursiveDoubling(Transport transport, Scratch scratch) {
        this.transport = transport;
        this.scratch = scratch;
        this.rank = transport.rank();
        this.size = transport.size();
    }

    void allreduce(MemorySegment buf, long count, DataType type, Reduction op) {
        allreduce(buf, 0, count, type, op);
    }

    /** Reduces the {@code count} elements starting at byte {@code base} of {@code buf}. */
    void allreduce(MemorySegment buf, long base, long count, DataType type, Reduction op) {
        allreduce(buf, base, count, type, op, 0, null, null);
    }

    /**
     * Reduces two independent element runs in the same messages: {@code count} elements of {@code type} at byte
     * {@code base} under {@code op}, and right after them {@code countB} elements of {@code typeB} under
     * {@code opB} ({@code countB} may be 0). Each round still moves one message each way, so the second run costs
     * bandwidth but no extra latency.
     */
    void allreduce(MemorySegment buf, long base, long count, DataType type, Reduction op,
                   long countB, DataType typeB, Reduction opB) {
        long bytesA = count * type.byteSize();
        long bytes = bytesA + (countB == 0 ? 0 : countB * typeB.byteSize());
        MemorySegment tmp = scratch.get(bytes);
        int pof2 = Integer.highestOneBit(size);
        int extra = size - pof2;
        int newRank;
        if (rank < 2 * extra) {
            if ((rank & 1) == 0) {
                transport.send(rank + 1, buf, base, bytes);
                newRank = -1;
            } else {
                transport.recv(rank - 1, tmp, 0, bytes);
                combine(buf, base, tmp, count, type, op, countB, typeB, opB);
                newRank = rank >> 1;
            }
        } else {
            newRank = rank - extra;
        }
        if (newRank >= 0) {
            for (int mask = 1; mask < pof2; mask <<= 1) {
                int newPeer = newRank ^ mask;
                int peer = newPeer < extra ? newPeer * 2 + 1 : newPeer + extra;
                transport.sendRecv(peer, buf, base, bytes, peer, tmp, 0, bytes);
                combine(buf, base, tmp, count, type, op, countB, typeB, opB);
            }
        }
        if (rank < 2 * extra) {
            if ((rank & 1) == 0) {
                transport.recv(rank + 1, buf, base, bytes);
            } else {
                transport.send(rank - 1, buf, base, bytes);
            }
        }
    }

    private static void combine(MemorySegment buf, long base, MemorySegment tmp, long count, DataType type,
                                Reduction op, long countB, DataType typeB, Reduction opB) {
        Kernels.reduce(buf, base, tmp, 0, count, type, op);
        if (countB > 0) {
            long bytesA = count * type.byteSize();
            Kernels.reduce(buf, base + bytesA, tmp, bytesA, countB, typeB, opB);
        }
    }
}
