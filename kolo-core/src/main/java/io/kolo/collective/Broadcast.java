package io.kolo.collective;

import io.kolo.transport.Transport;

import java.lang.foreign.MemorySegment;

/**
 * Broadcast from any root. Small messages go down a binomial tree (log2(p) hops); large ones flow down a chain
 * starting at the root in chunks, so that every link is busy at once and the time approaches one message
 * transfer plus p chunk transfers.
 */
final class Broadcast {

    private final Transport transport;
    private final long chunkBytes;
    private final int rank;
    private final int size;

    Broadcast(Transport transport, long chunkBytes) {
        this.transport = transport;
        this.chunkBytes = chunkBytes;
        this.rank = transport.rank();
        this.size = transport.size();
    }

    void tree(MemorySegment buf, long bytes, int root) {
        int v = Math.floorMod(rank - root, size);
        int mask = 1;
        while (mask < size) {
            if ((v & mask) != 0) {
                transport.recv((v - mask + root) % size, buf, 0, bytes);
                break;
            }
            mask <<= 1;
        }
        mask >>= 1;
        while (mask > 0) {
            if (v + mask < size) {
                transport.send((v + mask + root) % size, buf, 0, bytes);
            }
            mask >>= 1;
        }
    }

    void chain(MemorySegment buf, long bytes, int root) {
        if (bytes == 0) {
            return;
        }
        int v = Math.floorMod(rank - root, size);
        int next = (rank + 1) % size;
        int prev = (rank + size - 1) % size;
        long chunks = (bytes + chunkBytes - 1) / chunkBytes;
        if (v == 0) {
            for (long k = 0; k < chunks; k++) {
                transport.send(next, buf, k * chunkBytes, chunkLength(k, bytes));
            }
        } else if (v == size - 1) {
            for (long k = 0; k < chunks; k++) {
                transport.recv(prev, buf, k * chunkBytes, chunkLength(k, bytes));
            }
        } else {
            transport.recv(prev, buf, 0, chunkLength(0, bytes));
            for (long k = 0; k < chunks - 1; k++) {
                // Forward chunk k while chunk k + 1 arrives.
                transport.sendRecv(next, buf, k * chunkBytes, chunkLength(k, bytes),
                        prev, buf, (k + 1) * chunkBytes, chunkLength(k + 1, bytes));
            }
            transport.send(next, buf, (chunks - 1) * chunkBytes, chunkLength(chunks - 1, bytes));
        }
    }

    private long chunkLength(long k, long bytes) {
        return Math.min(chunkBytes, bytes - k * chunkBytes);
    }
}
