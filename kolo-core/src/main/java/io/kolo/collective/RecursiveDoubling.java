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
        long bytes = count * type.byteSize();
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
                Kernels.reduce(buf, base, tmp, 0, count, type, op);
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
                Kernels.reduce(buf, base, tmp, 0, count, type, op);
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
}
