package io.kolo.transport;

import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** Combining straight out of a ring: whole elements only, also when an element wraps around the ring's end. */
class ShmRingCombineTest {
    private static final Combiner SUM_FLOATS = (acc, accOffset, in, inOffset, bytes) -> {
        for (long i = 0; i < bytes; i += 4) {
            acc.set(ValueLayout.JAVA_FLOAT_UNALIGNED, accOffset + i, acc.get(ValueLayout.JAVA_FLOAT_UNALIGNED,
                    accOffset + i) + in.get(ValueLayout.JAVA_FLOAT_UNALIGNED, inOffset + i));
        }
    };

    @Test
    void everyByteOffsetAndWrapGivesTheElementWiseSum() {
        try (Arena arena = Arena.ofConfined()) {
            long capacity = 64;
            MemorySegment stash = arena.allocate(8);
            for (int skew = 0; skew < 8; skew++) {
                ShmRing ring = new ShmRing(arena.allocate(ShmRing.bytes(capacity), 64), 0, capacity);
                // An earlier message of another length leaves the positions at any byte.
                MemorySegment junk = arena.allocate(8);
                ring.offer(junk, 0, skew);
                ring.poll(junk, 0, skew);
                for (int round = 0; round < 10; round++) {
                    int n = 13;   // 52 bytes per message: the positions move around the 64-byte ring
                    MemorySegment msg = arena.allocate(4L * n);
                    MemorySegment acc = arena.allocate(4L * n);
                    for (int i = 0; i < n; i++) {
                        msg.setAtIndex(ValueLayout.JAVA_FLOAT, i, round * 100 + i);
                        acc.setAtIndex(ValueLayout.JAVA_FLOAT, i, 0.5f);
                    }
                    long sent = 0;
                    long got = 0;
                    while (got < 4L * n) {
                        // Publish in uneven pieces, so a combine may see a partial element and must wait for it.
                        sent += ring.offer(msg, sent, Math.min(7, 4L * n - sent));
                        got += ring.pollCombine(acc, got, 4L * n - got, 4, stash, SUM_FLOATS);
                        assertEquals(0, got % 4, "combined a partial element");
                    }
                    for (int i = 0; i < n; i++) {
                        assertEquals(round * 100 + i + 0.5f, acc.getAtIndex(ValueLayout.JAVA_FLOAT, i),
                                "skew " + skew + " round " + round + " element " + i);
                    }
                }
            }
        }
    }
}
