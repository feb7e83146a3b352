package io.kolo.collective;

import io.kolo.transport.Transport;

import java.lang.foreign.MemorySegment;

/**
 * Dissemination barrier: in round k each rank signals rank + 2^k and waits for rank - 2^k. After
 * ceil(log2(p)) rounds every rank has transitively heard from every other, for any p (no power-of-two fix-up).
 */
final class DisseminationBarrier {

    private final Transport transport;
    private final MemorySegment tokens;
    private final int rank;
    private final int size;

    /** {@code tokens} must hold at least two bytes: one sent, one received. */
    DisseminationBarrier(Transport transport, MemorySegment tokens) {
        this.transport = transport;
        this.tokens = tokens;
        this.rank = transport.rank();
        this.size = transport.size();
    }

    void await() {
        for (int distance = 1; distance < size; distance <<= 1) {
            transport.sendRecv((rank + distance) % size, tokens, 0, 1,
                    (rank + size - distance) % size, tokens, 1, 1);
        }
    }
}
