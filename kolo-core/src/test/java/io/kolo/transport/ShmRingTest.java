package io.kolo.transport;

import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** The ring's flow control: the producer's remembered consumer position is refreshed exactly when it matters. */
class ShmRingTest {

    @Test
    void aFullRingTakesMoreOnlyAfterTheConsumerReadAndExactlyThatMuch() {
        try (Arena arena = Arena.ofConfined()) {
            long capacity = 64;
            // Two views of one region, as producer and consumer are two processes with their own ShmRing.
            MemorySegment region = arena.allocate(ShmRing.bytes(capacity), 64);
            ShmRing producer = new ShmRing(region, 0, capacity);
            ShmRing consumer = new ShmRing(region, 0, capacity);
            MemorySegment src = arena.allocate(256);
            MemorySegment dst = arena.allocate(256);
            for (int i = 0; i < 256; i++) {
                src.set(ValueLayout.JAVA_BYTE, i, (byte) i);
            }
            assertEquals(40, producer.offer(src, 0, 40));
            assertEquals(24, producer.offer(src, 40, 100), "only what fits");
            assertEquals(0, producer.offer(src, 64, 10), "full");
            assertEquals(30, consumer.poll(dst, 0, 30));
            assertEquals(30, producer.offer(src, 64, 100), "exactly what the consumer freed, wrapping around");
            assertEquals(0, producer.offer(src, 94, 1));
            long got = 30;
            long sent = 94;
            // Many rounds of uneven sizes around the ring: every byte arrives once, in order.
            for (int round = 0; round < 200; round++) {
                got += consumer.poll(dst, got % 256, Math.min(256 - got % 256, 1 + round % 37));
                sent += producer.offer(src, sent % 256, Math.min(256 - sent % 256, 1 + round % 23));
            }
            got += consumer.poll(dst, got % 256, Math.min(256 - got % 256, 64));
            assertEquals(sent, got);
            for (long i = 0; i < Math.min(got, 256); i++) {
                assertEquals((byte) i, dst.get(ValueLayout.JAVA_BYTE, i), "byte " + i);
            }
        }
    }

    @Test
    void smallPiecesAreCopiedExactlyBetweenHeapAndNativeMemory() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment nativeSrc = arena.allocate(128);
            MemorySegment heapSrc = MemorySegment.ofArray(new float[32]);
            for (int i = 0; i < 128; i++) {
                nativeSrc.set(ValueLayout.JAVA_BYTE, i, (byte) (i * 7 + 1));
                heapSrc.set(ValueLayout.JAVA_BYTE, i, (byte) (i * 5 + 3));
            }
            for (MemorySegment src : new MemorySegment[]{nativeSrc, heapSrc}) {
                for (boolean heapDst : new boolean[]{false, true}) {
                    for (long bytes = 0; bytes <= ShmRing.WORD_COPY_MAX_BYTES + 9; bytes++) {
                        for (long from = 0; from < 9; from++) {
                            for (long to = 0; to < 9; to++) {
                                MemorySegment dst = heapDst ? MemorySegment.ofArray(new long[16]) : arena.allocate(128);
                                MemorySegment expected = arena.allocate(128);
                                dst.fill((byte) 0x55);
                                expected.fill((byte) 0x55);
                                ShmRing.copy(src, from, dst, to, bytes);
                                MemorySegment.copy(src, from, expected, to, bytes);
                                assertEquals(-1, dst.mismatch(expected), bytes + " bytes from " + from + " to " + to);
                            }
                        }
                    }
                }
            }
        }
    }
}
