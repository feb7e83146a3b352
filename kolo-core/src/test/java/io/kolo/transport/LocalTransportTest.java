package io.kolo.transport;

import io.kolo.KoloException;
import io.kolo.KoloTimeoutException;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

class LocalTransportTest {

    private static MemorySegment ints(int... values) {
        return MemorySegment.ofArray(values);
    }

    private static Throwable failureOf(CompletableFuture<?> f) throws InterruptedException {
        try {
            f.get(10, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            return e.getCause();
        } catch (java.util.concurrent.TimeoutException e) {
            fail("the pending call did not fail promptly");
        }
        fail("the pending call completed normally");
        return null;
    }

    @Test
    void messagesBetweenAPairArriveInOrder() throws Exception {
        List<Transport> g = LocalTransport.group(2, Duration.ofSeconds(10));
        CompletableFuture<Void> sender = CompletableFuture.runAsync(() -> {
            for (int i = 0; i < 200; i++) {
                g.get(0).send(1, ints(i, -i), 0, 8);
            }
        });
        int[] got = new int[2];
        MemorySegment dst = MemorySegment.ofArray(got);
        for (int i = 0; i < 200; i++) {
            g.get(1).recv(0, dst, 0, 8);
            assertArrayEquals(new int[] {i, -i}, got, "message " + i);
        }
        sender.get(10, TimeUnit.SECONDS);
    }

    @Test
    void aReceiveMayConsumeAMessageInPiecesLikeAStream() throws Exception {
        List<Transport> g = LocalTransport.group(2, Duration.ofSeconds(10));
        CompletableFuture<Void> sender = CompletableFuture.runAsync(() -> g.get(0).send(1, ints(1, 2, 3, 4), 0, 16));
        MemorySegment dst = MemorySegment.ofArray(new int[4]);
        g.get(1).recv(0, dst, 8, 8);
        g.get(1).recv(0, dst, 0, 8);
        sender.get(10, TimeUnit.SECONDS);
        assertArrayEquals(new int[] {3, 4, 1, 2}, dst.toArray(ValueLayout.JAVA_INT));
    }

    @Test
    void sendRecvAroundARingDoesNotDeadlock() throws Exception {
        int n = 5;
        List<Transport> g = LocalTransport.group(n, Duration.ofSeconds(10));
        CompletableFuture<?>[] ranks = new CompletableFuture<?>[n];
        int[][] received = new int[n][1];
        for (int r = 0; r < n; r++) {
            int rank = r;
            ranks[r] = CompletableFuture.runAsync(() -> g.get(rank).sendRecv(
                    (rank + 1) % n, ints(rank * 10), 0, 4,
                    (rank + n - 1) % n, MemorySegment.ofArray(received[rank]), 0, 4), Thread::startVirtualThread);
        }
        CompletableFuture.allOf(ranks).get(10, TimeUnit.SECONDS);
        for (int r = 0; r < n; r++) {
            assertEquals(((r + n - 1) % n) * 10, received[r][0]);
        }
    }

    @Test
    void aTimedOutReceiveNamesThePeerAndTheSize() {
        List<Transport> g = LocalTransport.group(4, Duration.ofMillis(200));
        KoloTimeoutException e = assertThrows(KoloTimeoutException.class,
                () -> g.get(1).recv(3, MemorySegment.ofArray(new byte[4096]), 0, 4096));
        assertTrue(e.getMessage().contains("timed out after 200 ms waiting for rank 3 to send 4096"), e.getMessage());
        assertTrue(e.getMessage().contains("to rank 1"), e.getMessage());
    }

    @Test
    void aTimedOutSendNamesThePeer() {
        List<Transport> g = LocalTransport.group(3, Duration.ofMillis(200));
        KoloTimeoutException e = assertThrows(KoloTimeoutException.class,
                () -> g.get(0).send(2, MemorySegment.ofArray(new byte[64]), 0, 64));
        assertTrue(e.getMessage().contains("waiting for rank 2 to receive 64"), e.getMessage());
    }

    @Test
    void abortOfOneRankFailsAPeersPendingReceiveWithPeerFailed() throws Exception {
        List<Transport> g = LocalTransport.group(3, Duration.ofSeconds(30));
        CompletableFuture<Void> pending = CompletableFuture.runAsync(
                () -> g.get(0).recv(2, MemorySegment.ofArray(new byte[8]), 0, 8));
        Thread.sleep(50);
        RuntimeException cause = new KoloException("out of memory on the GPU");
        long start = System.nanoTime();
        g.get(2).abort(cause);
        PeerFailedException e = assertInstanceOf(PeerFailedException.class, failureOf(pending));
        assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(5), "not prompt");
        assertEquals(2, e.peer());
        assertEquals("rank 2 aborted: out of memory on the GPU", e.getMessage());
        assertSame(cause, e.getCause());
        // Later calls on the aborted rank fail with the abort cause itself.
        assertSame(cause, assertThrows(RuntimeException.class,
                () -> g.get(2).send(0, MemorySegment.ofArray(new byte[1]), 0, 1)));
    }

    @Test
    void abortWakesTheAbortingRanksOwnPendingSend() throws Exception {
        List<Transport> g = LocalTransport.group(2, Duration.ofSeconds(30));
        CompletableFuture<Void> pending = CompletableFuture.runAsync(
                () -> g.get(0).send(1, MemorySegment.ofArray(new byte[8]), 0, 8));
        Thread.sleep(50);
        RuntimeException cause = new KoloException("shutting down");
        g.get(0).abort(cause);
        assertSame(cause, failureOf(pending));
        // The peer, receiving afterwards, sees a broken connection rather than the withdrawn bytes.
        PeerFailedException e = assertThrows(PeerFailedException.class,
                () -> g.get(1).recv(0, MemorySegment.ofArray(new byte[8]), 0, 8));
        assertEquals(0, e.peer());
    }

    @Test
    void closeFailsPeersWaitingOnTheClosedRank() throws Exception {
        List<Transport> g = LocalTransport.group(2, Duration.ofSeconds(30));
        CompletableFuture<Void> pending = CompletableFuture.runAsync(
                () -> g.get(1).send(0, MemorySegment.ofArray(new byte[8]), 0, 8));
        Thread.sleep(50);
        g.get(0).close();
        PeerFailedException e = assertInstanceOf(PeerFailedException.class, failureOf(pending));
        assertEquals(0, e.peer());
        assertThrows(KoloException.class, () -> g.get(0).recv(1, MemorySegment.ofArray(new byte[1]), 0, 1));
    }

    @Test
    void abortOfAnUninvolvedRankLeavesOtherPairsWorking() throws Exception {
        List<Transport> g = LocalTransport.group(3, Duration.ofSeconds(30));
        g.get(2).abort(new KoloException("gone"));
        CompletableFuture<Void> sender = CompletableFuture.runAsync(() -> g.get(0).send(1, ints(42), 0, 4));
        Thread.sleep(50);
        int[] got = new int[1];
        g.get(1).recv(0, MemorySegment.ofArray(got), 0, 4);
        assertEquals(42, got[0]);
        sender.get(10, TimeUnit.SECONDS);
    }

    @Test
    void rejectsBadArguments() {
        assertThrows(IllegalArgumentException.class, () -> LocalTransport.group(0, Duration.ofSeconds(1)));
        assertThrows(IllegalArgumentException.class, () -> LocalTransport.group(2, Duration.ZERO));
        Transport t = LocalTransport.group(2, Duration.ofSeconds(1)).get(0);
        assertThrows(IllegalArgumentException.class, () -> t.send(2, MemorySegment.ofArray(new byte[1]), 0, 1));
        assertThrows(IndexOutOfBoundsException.class, () -> t.send(1, MemorySegment.ofArray(new byte[1]), 0, 2));
        assertEquals(0, t.rank());
        assertEquals(2, t.size());
    }
}
