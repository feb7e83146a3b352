package io.kolo.collective;

import io.kolo.transport.Transport;

import java.lang.foreign.MemorySegment;

/**
 * Personalised all-to-all by pairwise exchange: in step k every rank sends to rank + k and receives from
 * rank - k, so each step is a permutation and no rank is the target of two senders at once.
 */
final class PairwiseExchange {

    private final Transport transport;
    private final int rank;
    private final int size;
    private final long[] sendOffsets;
    private final long[] recvOffsets;

    PairwiseExchange(Transport transport) {
        this.transport = transport;
        this.rank = transport.rank();
        this.size = transport.size();
        this.sendOffsets = new long[size];
        this.recvOffsets = new long[size];
    }

    void alltoallv(MemorySegment send, long[] sendBytes, MemorySegment recv, long[] recvBytes) {
        long s = 0;
        long r = 0;
        for (int p = 0; p < size; p++) {
            sendOffsets[p] = s;
            recvOffsets[p] = r;
            s += sendBytes[p];
            r += recvBytes[p];
        }
        MemorySegment.copy(send, sendOffsets[rank], recv, recvOffsets[rank], sendBytes[rank]);
        for (int k = 1; k < size; k++) {
            int to = (rank + k) % size;
            int from = (rank + size - k) % size;
            transport.sendRecv(to, send, sendOffsets[to], sendBytes[to], from, recv, recvOffsets[from], recvBytes[from]);
        }
    }
}
