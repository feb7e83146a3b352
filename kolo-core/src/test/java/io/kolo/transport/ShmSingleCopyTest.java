package io.kolo.transport;

import io.kolo.bootstrap.InMemoryStore;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;

import static io.kolo.transport.ShmTransportTest.assertPattern;
import static io.kolo.transport.ShmTransportTest.filled;
import static io.kolo.transport.ShmTransportTest.pattern;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Large messages read straight out of the sender's memory (process_vm_readv) instead of copied through the ring: the
 * bytes arrive exactly, whatever memory each side uses, and the ranks fall back to the ring where they must.
 */
class ShmSingleCopyTest {
    private static final long SMALL = ShmWire.DIRECT_MIN_BYTES - 1;
    private static final long[] SIZES = {SMALL, ShmWire.DIRECT_MIN_BYTES, (1 << 20) + 3, 3L << 20};

    private static List<Transport> open(ShmTransport.SingleCopy rank0SingleCopy,
                                        ShmTransport.SingleCopy rank1SingleCopy) {
        InMemoryStore store = new InMemoryStore();
        String job = ShmGroup.newJob();
        int[] all = IntStream.range(0, 2).toArray();
        return ShmGroup.connectAll(2, rank -> ShmTransport.connect(ShmTransport.DIR, rank, 2, all, store, job, 65536,
                Duration.ofSeconds(20), Duration.ofSeconds(30), rank == 0 ? rank0SingleCopy : rank1SingleCopy));
    }

    private static MemorySegment heapFilled(int from, long bytes) {
        byte[] b = new byte[Math.toIntExact(bytes)];
        for (int i = 0; i < b.length; i++) {
            b[i] = pattern(from, i);
        }
        return MemorySegment.ofArray(b);
    }

    private static ShmTransport shm(List<Transport> t, int rank) {
        return (ShmTransport) t.get(rank);
    }

    @Test
    void largeMessagesFromNativeMemoryAreReadStraightFromTheSenderAndHeapOnesGoThroughTheRing() throws Exception {
        assumeTrue(ShmSegments.available(), "no writable /dev/shm");
        List<Transport> t = open(ShmTransport.SingleCopy.ALWAYS, ShmTransport.SingleCopy.ALWAYS);
        try (Arena arena = Arena.ofShared()) {
            assumeTrue(shm(t, 1).readsDirectlyFrom(0), "skipped: process_vm_readv is refused here (ptrace"
                    + " restrictions), so every message goes through the ring");
            // Native to native, heap to native, native to heap, heap to heap: each size, in that order.
            CompletableFuture<Void> sender = CompletableFuture.runAsync(() -> {
                for (long n : SIZES) {
                    t.get(0).send(1, filled(arena, 0, n), 0, n);
                    t.get(0).send(1, heapFilled(0, n), 0, n);
                    t.get(0).send(1, filled(arena, 0, n), 0, n);
                    t.get(0).send(1, heapFilled(0, n), 0, n);
                }
            }, Thread::startVirtualThread);
            long direct = 0;
            for (long n : SIZES) {
                for (int kind = 0; kind < 4; kind++) {
                    MemorySegment dst = kind < 2 ? arena.allocate(n) : MemorySegment.ofArray(new byte[(int) n]);
                    long before = shm(t, 1).directReadsFrom(0);
                    t.get(1).recv(0, dst, 0, n);
                    assertPattern(dst, 0, n);
                    long now = shm(t, 1).directReadsFrom(0);
                    boolean nativeSource = kind % 2 == 0;
                    assertEquals(nativeSource && n >= ShmWire.DIRECT_MIN_BYTES ? 1 : 0, now - before,
                            n + " bytes, " + (nativeSource ? "native" : "heap") + " source, " + (kind < 2 ? "native"
                                    : "heap") + " destination");
                    direct += now - before;
                }
            }
            sender.get(20, TimeUnit.SECONDS);
            assertEquals(2L * (SIZES.length - 1), direct);
        } finally {
            t.forEach(Transport::close);
        }
    }

    @Test
    void aCombiningReceiveReducesDirectlyReadBytesExactly() throws Exception {
        assumeTrue(ShmSegments.available(), "no writable /dev/shm");
        List<Transport> t = open(ShmTransport.SingleCopy.ALWAYS, ShmTransport.SingleCopy.ALWAYS);
        // Byte-wise XOR: any misplaced, repeated or missing piece changes the result.
        Combiner xor = (acc, accOffset, in, inOffset, bytes) -> {
            for (long i = 0; i < bytes; i++) {
                acc.set(ValueLayout.JAVA_BYTE, accOffset + i, (byte) (acc.get(ValueLayout.JAVA_BYTE, accOffset + i)
                        ^ in.get(ValueLayout.JAVA_BYTE, inOffset + i)));
            }
        };
        long n = (1 << 20) + 8;
        try (Arena arena = Arena.ofShared()) {
            assumeTrue(shm(t, 0).readsDirectlyFrom(1), "skipped: process_vm_readv is refused here");
            List<CompletableFuture<MemorySegment>> ranks = IntStream.range(0, 2).mapToObj(rank ->
                    CompletableFuture.supplyAsync(() -> {
                        MemorySegment src = filled(arena, rank, n);
                        MemorySegment acc = filled(arena, 7, n);
                        MemorySegment scratch = arena.allocate(n);
                        t.get(rank).sendRecvCombine(1 - rank, src, 0, n, 1 - rank, acc, 0, n, 4, scratch, xor);
                        return acc;
                    }, Thread::startVirtualThread)).toList();
            for (int rank = 0; rank < 2; rank++) {
                MemorySegment acc = ranks.get(rank).get(30, TimeUnit.SECONDS);
                for (long i = 0; i < n; i++) {
                    byte expected = (byte) (pattern(7, i) ^ pattern(1 - rank, i));
                    if (acc.get(ValueLayout.JAVA_BYTE, i) != expected) {
                        throw new AssertionError("rank " + rank + ": byte " + i + " of " + n + " is wrong");
                    }
                }
                assertEquals(1, shm(t, rank).directReadsFrom(1 - rank), "rank " + rank + " should have read directly");
            }
        } finally {
            t.forEach(Transport::close);
        }
    }

    @Test
    void aRankWithSingleCopyOffGetsEveryMessageThroughTheRingAndReadsNothingDirectly() throws Exception {
        assumeTrue(ShmSegments.available(), "no writable /dev/shm");
        List<Transport> t = open(ShmTransport.SingleCopy.ALWAYS, ShmTransport.SingleCopy.NEVER);
        long n = 3L << 20;
        try (Arena arena = Arena.ofShared()) {
            assertFalse(shm(t, 1).readsDirectlyFrom(0));
            List<CompletableFuture<MemorySegment>> ranks = IntStream.range(0, 2).mapToObj(rank ->
                    CompletableFuture.supplyAsync(() -> {
                        MemorySegment dst = arena.allocate(n);
                        t.get(rank).sendRecv(1 - rank, filled(arena, rank, n), 0, n, 1 - rank, dst, 0, n);
                        return dst;
                    }, Thread::startVirtualThread)).toList();
            for (int rank = 0; rank < 2; rank++) {
                assertPattern(ranks.get(rank).get(30, TimeUnit.SECONDS), 1 - rank, n);
            }
            assertEquals(0, shm(t, 1).directReadsFrom(0), "rank 1 asked not to read other ranks' memory");
            // Rank 0 still may read rank 1's memory where the system allows it.
            assertEquals(shm(t, 0).readsDirectlyFrom(1) ? 1 : 0, shm(t, 0).directReadsFrom(1));
        } finally {
            t.forEach(Transport::close);
        }
    }

    @Test
    void withAutoTheSenderProbesBothWaysAndTheReceiverFollowsEachMessagesHeader() throws Exception {
        assumeTrue(ShmSegments.available(), "no writable /dev/shm");
        List<Transport> t = open(ShmTransport.SingleCopy.AUTO, ShmTransport.SingleCopy.AUTO);
        long n = 256 << 10;
        // The rings of open() hold 64 KiB: probes of 256 KiB messages settle on 2 and measure 8 of each way.
        int probe = new CopyChoice(65536).probeLength(n);
        assertEquals(10, probe);
        int messages = 2 * probe + 8;
        try (Arena arena = Arena.ofShared()) {
            assumeTrue(shm(t, 1).readsDirectlyFrom(0), "skipped: process_vm_readv is refused here");
            CompletableFuture<Void> sender = CompletableFuture.runAsync(() -> {
                MemorySegment src = filled(arena, 0, n);
                for (int i = 0; i < messages; i++) {
                    t.get(0).send(1, src, 0, n);
                }
            }, Thread::startVirtualThread);
            MemorySegment dst = arena.allocate(n);
            long[] reads = new long[messages + 1];
            for (int i = 0; i < messages; i++) {
                dst.fill((byte) 0);
                t.get(1).recv(0, dst, 0, n);
                assertPattern(dst, 0, n);
                reads[i + 1] = shm(t, 1).directReadsFrom(0);
            }
            sender.get(20, TimeUnit.SECONDS);
            // A probe of each way comes first: single copies, then copies through the ring; every message, whichever
            // way it came, arrived exactly (above).
            for (int i = 1; i <= 2 * probe; i++) {
                assertEquals(Math.min(i, probe), reads[i], "direct reads after " + i + " messages");
            }
            // Messages larger than the ring are chosen for alike (issue: from 2 MiB up native memory always took the
            // single copy, which loses to the ring on some machines): a probe of each way, every message exact.
            long large = 4L << 20;
            int largeProbe = new CopyChoice(65536).probeLength(large);
            assertEquals(5, largeProbe, "a probe of large messages is short: 2 settling, 3 measured");
            MemorySegment big = filled(arena, 0, large);
            MemorySegment into = arena.allocate(large);
            long before = shm(t, 1).directReadsFrom(0);
            CompletableFuture<Void> bigSender = CompletableFuture.runAsync(() -> {
                for (int i = 0; i < 2 * largeProbe; i++) {
                    t.get(0).send(1, big, 0, large);
                }
            }, Thread::startVirtualThread);
            for (int i = 1; i <= 2 * largeProbe; i++) {
                into.fill((byte) 0);
                t.get(1).recv(0, into, 0, large);
                assertPattern(into, 0, large);
                assertEquals(before + Math.min(i, largeProbe), shm(t, 1).directReadsFrom(0),
                        "direct reads after " + i + " messages of 4 MiB");
            }
            bigSender.get(60, TimeUnit.SECONDS);
        } finally {
            t.forEach(Transport::close);
        }
    }
}
