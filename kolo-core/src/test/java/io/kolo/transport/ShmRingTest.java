package io.kolo.transport;

import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

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

    @Test
    void slotsAndStreamBytesShareTheRingInOrderAcrossManyLaps() {
        try (Arena arena = Arena.ofConfined()) {
            long capacity = 2048;
            MemorySegment region = arena.allocate(ShmRing.bytes(capacity), 64);
            ShmRing.initialize(region, 0, 0x1234_5678_9abcL);
            ShmRing producer = new ShmRing(region, 0, capacity);
            ShmRing consumer = new ShmRing(region, 0, capacity);
            MemorySegment src = arena.allocate(700);
            MemorySegment dst = arena.allocate(700);
            java.util.Random random = new java.util.Random(7);
            int slots = 0;
            for (int message = 0; message < 20000; message++) {
                // Both sides know each message's length; short ones go as slots of one or more lines (some of them
                // moved past the ring's end to the next lap), the rest as stream bytes.
                int length = 1 + random.nextInt(random.nextBoolean() ? (int) ShmRing.SLOT_DATA_BYTES : 700);
                boolean slot = length <= ShmRing.SLOT_DATA_BYTES;
                slots += slot ? 1 : 0;
                for (int i = 0; i < length; i++) {
                    src.set(ValueLayout.JAVA_BYTE, i, (byte) (message * 31 + i));
                }
                dst.fill((byte) 0);
                long sent = 0;
                long got = 0;
                while (got < length) {
                    if (sent < length) {
                        sent += slot ? producer.offerSlot(src, 0, length) : producer.offer(src, sent, length - sent);
                    }
                    got += slot ? consumer.pollSlot(dst, 0, length) : consumer.poll(dst, got, length - got);
                }
                assertEquals(length, sent, "message " + message);
                assertEquals(-1, dst.asSlice(0, length).mismatch(src.asSlice(0, length)), "message " + message);
                assertEquals(0, consumer.available(), "nothing left behind message " + message);
            }
            assertTrue(slots > 10000 && producer.written() > 1000 * capacity, slots + " slots, " + producer.written()
                    + " bytes");
        }
    }

    @Test
    void aSlotIsSeenOnlyOnceItsProducerWroteIt() {
        try (Arena arena = Arena.ofConfined()) {
            long capacity = 1024;
            MemorySegment region = arena.allocate(ShmRing.bytes(capacity), 64);
            ShmRing.initialize(region, 0, 42);
            ShmRing producer = new ShmRing(region, 0, capacity);
            ShmRing consumer = new ShmRing(region, 0, capacity);
            MemorySegment src = arena.allocate(capacity);
            MemorySegment dst = arena.allocate(capacity);
            assertEquals(0, consumer.pollSlot(dst, 0, 8), "a fresh ring holds no slot");
            // Earlier bytes that happen to hold the slot's position + 1, as an int64 tensor might: not a slot.
            long dataAt = ShmRing.CONTROL_BYTES;
            for (long p = 0; p < capacity; p += 8) {
                region.set(ValueLayout.JAVA_LONG, dataAt + p, p + 1);
            }
            assertEquals(0, consumer.pollSlot(dst, 0, 8), "stale bytes are not a slot");
            src.set(ValueLayout.JAVA_LONG, 0, 99);
            assertEquals(8, producer.offerSlot(src, 0, 8));
            // Stream bytes behind the slot up to position 961: the next slot starts at the line at 1024, which the
            // ring holds only once the consumer has read the first slot.
            assertEquals(897, producer.offer(src, 0, 897));
            assertEquals(0, producer.offerSlot(src, 0, 8), "no room for padding and slot yet");
            assertEquals(8, consumer.pollSlot(dst, 0, 8));
            assertEquals(99, dst.get(ValueLayout.JAVA_LONG, 0));
            src.set(ValueLayout.JAVA_LONG, 0, 100);
            assertEquals(8, producer.offerSlot(src, 0, 8), "room once the first slot was read");
            assertEquals(897, consumer.poll(dst, 0, 897));
            assertEquals(99, dst.get(ValueLayout.JAVA_BYTE, 0));
            assertEquals(8, consumer.pollSlot(dst, 0, 8));
            assertEquals(100, dst.get(ValueLayout.JAVA_LONG, 0));
            assertEquals(0, consumer.pollSlot(dst, 0, 8), "each slot is read once");
        }
    }

    @Test
    void aSlotThatWouldRunPastTheRingsEndStartsTheNextLap() {
        try (Arena arena = Arena.ofConfined()) {
            long capacity = 1024;
            long key = 0x5eed;
            MemorySegment region = arena.allocate(ShmRing.bytes(capacity), 64);
            ShmRing.initialize(region, 0, key);
            ShmRing producer = new ShmRing(region, 0, capacity);
            ShmRing consumer = new ShmRing(region, 0, capacity);
            MemorySegment src = arena.allocate(capacity);
            MemorySegment dst = arena.allocate(capacity);
            assertEquals(900, producer.offer(src, 0, 900));
            assertEquals(900, consumer.poll(dst, 0, 900));
            for (int i = 0; i < 300; i++) {
                src.set(ValueLayout.JAVA_BYTE, i, (byte) (i * 13 + 5));
            }
            // 300 bytes and the check word fill 5 lines: from the line at 960 they would run past the ring's end.
            assertEquals(300, producer.offerSlot(src, 0, 300));
            assertEquals((1024 + 1) ^ (key | Long.MIN_VALUE), region.get(ValueLayout.JAVA_LONG, ShmRing.CONTROL_BYTES),
                    "the check word at the ring's start, for position 1024");
            assertEquals(1024 + 5 * 64, producer.written());
            assertEquals(300, consumer.pollSlot(dst, 0, 300));
            assertEquals(-1, dst.asSlice(0, 300).mismatch(src.asSlice(0, 300)));
            assertEquals(1024 + 5 * 64, consumer.read());
            assertEquals(0, consumer.pollSlot(dst, 0, 8), "each slot is read once");
            src.set(ValueLayout.JAVA_LONG, 0, 7);
            assertEquals(8, producer.offerSlot(src, 0, 8));
            assertEquals(8, consumer.pollSlot(dst, 0, 8));
            assertEquals(7, dst.get(ValueLayout.JAVA_LONG, 0));
        }
    }
}
