package io.kolo.transport;

import io.kolo.KoloException;
import io.kolo.KoloTimeoutException;
import io.kolo.bootstrap.Handshake;
import io.kolo.bootstrap.InMemoryStore;
import io.kolo.launch.JobSecret;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.io.OutputStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

@Timeout(value = 60, unit = TimeUnit.SECONDS)
class TcpTransportTest {
    private static final InetAddress LOOPBACK = InetAddress.ofLiteral("127.0.0.1");
    private static final Duration START = Duration.ofSeconds(20);
    private static final Duration TIMEOUT = Duration.ofSeconds(20);
    private static final int BIG = 8 << 20;

    private final ExecutorService pool = Executors.newCachedThreadPool();
    private final InMemoryStore store = new InMemoryStore();
    private final JobSecret secret = JobSecret.generate();
    private final List<TcpTransport> opened = new ArrayList<>();

    @AfterEach
    void tearDown() {
        opened.forEach(TcpTransport::close);
        pool.shutdownNow();
        store.close();
    }

    private List<TcpTransport> mesh(int size, Duration timeout) throws Exception {
        List<Future<TcpTransport>> futures = new ArrayList<>();
        for (int r = 0; r < size; r++) {
            int rank = r;
            futures.add(pool.submit(() -> TcpTransport.connect(rank, size, LOOPBACK, store, secret, START, timeout)));
        }
        List<TcpTransport> ts = new ArrayList<>();
        for (Future<TcpTransport> f : futures) {
            TcpTransport t = f.get(30, TimeUnit.SECONDS);
            opened.add(t);
            ts.add(t);
        }
        return ts;
    }

    private void onEveryRank(List<TcpTransport> ts, RankBody body) throws Exception {
        List<Future<Object>> futures = new ArrayList<>();
        for (TcpTransport t : ts) {
            futures.add(pool.submit((Callable<Object>) () -> {
                body.run(t);
                return null;
            }));
        }
        for (Future<Object> f : futures) {
            try {
                f.get(45, TimeUnit.SECONDS);
            } catch (ExecutionException e) {
                throw e.getCause() instanceof Exception ex ? ex : new RuntimeException(e.getCause());
            }
        }
    }

    interface RankBody {
        void run(TcpTransport t) throws Exception;
    }

    private static byte pattern(int sender, int receiver, long i) {
        return (byte) (sender * 31 + receiver * 7 + i * 13 + (i >>> 9));
    }

    private static void fill(MemorySegment s, int sender, int receiver) {
        for (long i = 0; i < s.byteSize(); i++) {
            s.set(ValueLayout.JAVA_BYTE, i, pattern(sender, receiver, i));
        }
    }

    private static void check(MemorySegment s, int sender, int receiver) {
        for (long i = 0; i < s.byteSize(); i++) {
            if (s.get(ValueLayout.JAVA_BYTE, i) != pattern(sender, receiver, i)) {
                fail("byte " + i + " from rank " + sender + " to rank " + receiver + " is wrong");
            }
        }
    }

    @ParameterizedTest
    @ValueSource(ints = {2, 3, 4})
    void ringSendRecvOfEverySizeWithNativeSegments(int size) throws Exception {
        List<TcpTransport> ts = mesh(size, TIMEOUT);
        onEveryRank(ts, t -> {
            int next = (t.rank() + 1) % size;
            int prev = (t.rank() + size - 1) % size;
            try (Arena arena = Arena.ofConfined()) {
                for (int n : new int[] {0, 1, 1000, BIG}) {
                    MemorySegment src = arena.allocate(Math.max(n, 1)).asSlice(0, n);
                    MemorySegment dst = arena.allocate(Math.max(n, 1)).asSlice(0, n);
                    fill(src, t.rank(), next);
                    t.sendRecv(next, src, 0, n, prev, dst, 0, n);
                    check(dst, prev, t.rank());
                }
            }
        });
    }

    @ParameterizedTest
    @ValueSource(ints = {2, 3, 4})
    void everyPairExchangesBothWaysAtOnceWithHeapFloatSegments(int size) throws Exception {
        List<TcpTransport> ts = mesh(size, TIMEOUT);
        onEveryRank(ts, t -> {
            // float[] has no ByteBuffer view, so this goes through the staging buffer.
            MemorySegment src = MemorySegment.ofArray(new float[BIG / 4]);
            MemorySegment dst = MemorySegment.ofArray(new float[BIG / 4]);
            for (int peer = 0; peer < size; peer++) {
                if (peer == t.rank()) {
                    continue;
                }
                fill(src, t.rank(), peer);
                t.sendRecv(peer, src, 0, BIG, peer, dst, 0, BIG);
                check(dst, peer, t.rank());
            }
        });
    }

    @ParameterizedTest
    @ValueSource(ints = {2, 3, 4})
    void blockingSendAndRecvWithByteArraysAndOffsets(int size) throws Exception {
        List<TcpTransport> ts = mesh(size, TIMEOUT);
        onEveryRank(ts, t -> {
            for (int n : new int[] {0, 17, BIG}) {
                byte[] buf = new byte[n + 10];
                MemorySegment seg = MemorySegment.ofArray(buf);
                for (int peer = 0; peer < size; peer++) {
                    if (peer == t.rank()) {
                        continue;
                    }
                    // Lower rank sends first, so blocking calls pair up without deadlock.
                    boolean first = t.rank() < peer;
                    for (int turn = 0; turn < 2; turn++) {
                        if (first == (turn == 0)) {
                            fill(seg.asSlice(5, n), t.rank(), peer);
                            t.send(peer, seg, 5, n);
                        } else {
                            t.recv(peer, seg, 3, n);
                            check(seg.asSlice(3, n), peer, t.rank());
                        }
                    }
                }
            }
        });
    }

    @Test
    void steadyStateCallsDoNotAllocate() throws Exception {
        List<TcpTransport> ts = mesh(2, TIMEOUT);
        com.sun.management.ThreadMXBean threads =
                (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
        long[] allocated = new long[2];
        onEveryRank(ts, t -> {
            int peer = 1 - t.rank();
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment nativeSrc = arena.allocate(256 << 10);
                MemorySegment nativeDst = arena.allocate(256 << 10);
                MemorySegment heapSrc = MemorySegment.ofArray(new float[64 << 10]);
                MemorySegment heapDst = MemorySegment.ofArray(new float[64 << 10]);
                Runnable round = () -> {
                    t.sendRecv(peer, nativeSrc, 0, nativeSrc.byteSize(), peer, nativeDst, 0, nativeDst.byteSize());
                    t.sendRecv(peer, heapSrc, 0, heapSrc.byteSize(), peer, heapDst, 0, heapDst.byteSize());
                    if (t.rank() == 0) {
                        t.send(peer, nativeSrc, 8, 100);
                    } else {
                        t.recv(peer, nativeDst, 8, 100);
                    }
                };
                for (int i = 0; i < 200; i++) {
                    round.run();
                }
                long before = threads.getCurrentThreadAllocatedBytes();
                for (int i = 0; i < 200; i++) {
                    round.run();
                }
                allocated[t.rank()] = threads.getCurrentThreadAllocatedBytes() - before;
            }
        });
        // A little slack for one-off JDK internals; per-call allocation would be tens of kilobytes here.
        assertTrue(allocated[0] < 8192 && allocated[1] < 8192,
                "allocated " + allocated[0] + " and " + allocated[1] + " bytes in 600 calls");
    }

    @Test
    void messagesArriveInOrderAcrossManySmallCalls() throws Exception {
        List<TcpTransport> ts = mesh(2, TIMEOUT);
        onEveryRank(ts, t -> {
            MemorySegment one = MemorySegment.ofArray(new int[1]);
            int peer = 1 - t.rank();
            for (int i = 0; i < 2000; i++) {
                if (t.rank() == 0) {
                    one.set(ValueLayout.JAVA_INT, 0, i);
                    t.send(peer, one, 0, 4);
                } else {
                    t.recv(peer, one, 0, 4);
                    assertEquals(i, one.get(ValueLayout.JAVA_INT, 0));
                }
            }
        });
    }

    @Test
    void strangersAreRejectedDuringSetupAndTheMeshStillForms() throws Exception {
        Future<TcpTransport> rank0 = pool.submit(
                () -> TcpTransport.connect(0, 3, LOOPBACK, store, secret, START, TIMEOUT));
        String addr = store.get("addr/0", Duration.ofSeconds(10));
        assertTrue(addr.startsWith("127.0.0.1:"), addr);
        int port = Integer.parseInt(addr.substring(addr.lastIndexOf(':') + 1));

        // A silent stranger first: it must not hold up the real peers.
        try (Socket silent = new Socket(LOOPBACK, port);
             Socket junk = new Socket(LOOPBACK, port);
             Socket wrongSecret = new Socket(LOOPBACK, port)) {
            OutputStream o = junk.getOutputStream();
            o.write("GET / HTTP/1.1\r\nHost: kolo\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
            o.flush();
            wrongSecret.setSoTimeout(10_000);
            assertThrows(IOException.class, () -> Handshake.client(wrongSecret, JobSecret.generate(), "data",
                    TcpConnections.claim(2, 3, 0), Duration.ofSeconds(10)));

            List<Future<TcpTransport>> others = new ArrayList<>();
            for (int r = 1; r < 3; r++) {
                int rank = r;
                others.add(pool.submit(() -> TcpTransport.connect(rank, 3, LOOPBACK, store, secret, START, TIMEOUT)));
            }
            List<TcpTransport> ts = new ArrayList<>();
            ts.add(rank0.get(30, TimeUnit.SECONDS));
            for (Future<TcpTransport> f : others) {
                ts.add(f.get(30, TimeUnit.SECONDS));
            }
            opened.addAll(ts);
            assertEquals(silent.isConnected(), true);

            // Whatever the strangers sent must not show up as data.
            onEveryRank(ts, t -> {
                int next = (t.rank() + 1) % 3;
                int prev = (t.rank() + 2) % 3;
                MemorySegment src = MemorySegment.ofArray(new byte[64]);
                MemorySegment dst = MemorySegment.ofArray(new byte[64]);
                fill(src, t.rank(), next);
                t.sendRecv(next, src, 0, 64, prev, dst, 0, 64);
                check(dst, prev, t.rank());
            });
        }
        // The listener is closed once every higher rank has connected.
        assertThrows(ConnectException.class, () -> {
            try (Socket s = new Socket()) {
                s.connect(new InetSocketAddress(LOOPBACK, port), 2000);
            }
        });
    }

    /**
     * Many connections in their handshake at once (a large job's peers, or strangers) cost the accepting rank no
     * thread each: one thread runs every handshake, and a real peer still connects among two hundred silent ones.
     */
    @Test
    void manyHandshakesAtOnceStartNoThreadEachAndARealPeerStillConnects() throws Exception {
        Future<TcpTransport> rank0 = pool.submit(
                () -> TcpTransport.connect(0, 2, LOOPBACK, store, secret, START, TIMEOUT));
        String addr = store.get("addr/0", Duration.ofSeconds(10));
        int port = Integer.parseInt(addr.substring(addr.lastIndexOf(':') + 1));
        List<Socket> silent = new ArrayList<>();
        try {
            for (int i = 0; i < 200; i++) {
                silent.add(new Socket(LOOPBACK, port));
            }
            // Give an acceptor that started a thread per connection the time to have started them all.
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
            long threads = 0;
            while (System.nanoTime() < until && threads <= 10) {
                threads = Thread.getAllStackTraces().keySet().stream()
                        .filter(t -> t.getName().startsWith("kolo-tcp-handshake") || t.getName().startsWith("kolo-tcp-accept"))
                        .count();
                Thread.sleep(50);
            }
            // Acceptors of ranks closed a moment ago may still be ending; a thread per handshake would be 200.
            assertTrue(threads <= 10, threads + " data-plane threads for 200 connections in their handshake");
            TcpTransport rank1 = TcpTransport.connect(1, 2, LOOPBACK, store, secret, START, TIMEOUT);
            opened.add(rank1);
            TcpTransport zero = rank0.get(30, TimeUnit.SECONDS);
            opened.add(zero);
            exchange(zero, rank1);
        } finally {
            for (Socket s : silent) {
                s.close();
            }
        }
    }

    /**
     * An eavesdropper recorded rank 2's handshake with rank 0 (here: with a rank 0 of an earlier job sharing the
     * secret) and replays it at rank 0's data port before the real rank 2 connects: it must be refused, not counted as
     * rank 2, and the real rank 2 must still take its place.
     */
    @Test
    void aReplayedDataHandshakeIsNotCountedAsARank() throws Exception {
        byte[] recorded;
        try (java.net.ServerSocket earlier = new java.net.ServerSocket(0, 1, LOOPBACK)) {
            CompletableFuture<String> earlierRank0 = CompletableFuture.supplyAsync(() -> {
                try (Socket s = earlier.accept()) {
                    return Handshake.server(s, secret, "data", Duration.ofSeconds(10), Handshake.ClaimCheck.ANY);
                } catch (IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            }, pool);
            try (io.kolo.bootstrap.RecordingProxy proxy = new io.kolo.bootstrap.RecordingProxy(
                    new InetSocketAddress(LOOPBACK, earlier.getLocalPort()));
                 Socket rank2 = new Socket(proxy.address().getAddress(), proxy.address().getPort())) {
                Handshake.client(rank2, secret, "data", TcpConnections.claim(2, 3, 0), Duration.ofSeconds(10));
                earlierRank0.get(10, TimeUnit.SECONDS);
                Thread.sleep(100);
                recorded = proxy.recorded();
            }
        }
        Future<TcpTransport> rank0 = pool.submit(
                () -> TcpTransport.connect(0, 3, LOOPBACK, store, secret, START, TIMEOUT));
        String addr = store.get("addr/0", Duration.ofSeconds(10));
        int port = Integer.parseInt(addr.substring(addr.lastIndexOf(':') + 1));
        try (Socket replay = new Socket(LOOPBACK, port)) {
            replay.setSoTimeout(10_000);
            replay.getOutputStream().write(recorded);
            byte[] answer = replay.getInputStream().readAllBytes();
            assertEquals(4 + 1 + 32, answer.length, "rank 0 answered the replay beyond its handshake header");
        }
        List<Future<TcpTransport>> others = new ArrayList<>();
        for (int r = 1; r < 3; r++) {
            int rank = r;
            others.add(pool.submit(() -> TcpTransport.connect(rank, 3, LOOPBACK, store, secret, START, TIMEOUT)));
        }
        List<TcpTransport> ts = new ArrayList<>();
        ts.add(rank0.get(30, TimeUnit.SECONDS));
        for (Future<TcpTransport> f : others) {
            ts.add(f.get(30, TimeUnit.SECONDS));
        }
        opened.addAll(ts);
        onEveryRank(ts, t -> {
            int next = (t.rank() + 1) % 3;
            int prev = (t.rank() + 2) % 3;
            MemorySegment src = MemorySegment.ofArray(new byte[64]);
            MemorySegment dst = MemorySegment.ofArray(new byte[64]);
            fill(src, t.rank(), next);
            t.sendRecv(next, src, 0, 64, prev, dst, 0, 64);
            check(dst, prev, t.rank());
        });
    }

    /** One message each way between {@code a} and {@code b}: their connection is open from then on. */
    private void exchange(TcpTransport a, TcpTransport b) throws Exception {
        onEveryRank(List.of(a, b), t -> {
            int peer = (t == a ? b : a).rank();
            t.sendRecv(peer, MemorySegment.ofArray(new byte[8]), 0, 8, peer, MemorySegment.ofArray(new byte[8]), 0, 8);
        });
    }

    private static int sockets() throws IOException {
        try (var fds = java.nio.file.Files.list(java.nio.file.Path.of("/proc/self/fd"))) {
            return (int) fds.filter(fd -> {
                try {
                    return java.nio.file.Files.readSymbolicLink(fd).toString().startsWith("socket:");
                } catch (IOException gone) {
                    return false;
                }
            }).count();
        }
    }

    @Test
    void connectionsOpenOnlyBetweenRanksThatExchangeAndARingStillCompletes() throws Exception {
        int size = 8;
        int before = sockets();
        List<TcpTransport> ts = mesh(size, TIMEOUT);
        // Each rank's port, nothing else: no connection until a first exchange.
        assertEquals(size, sockets() - before, "sockets after start");
        onEveryRank(ts, t -> {
            int next = (t.rank() + 1) % size;
            int prev = (t.rank() + size - 1) % size;
            MemorySegment src = MemorySegment.ofArray(new byte[64]);
            MemorySegment dst = MemorySegment.ofArray(new byte[64]);
            fill(src, t.rank(), next);
            t.sendRecv(next, src, 0, 64, prev, dst, 0, 64);
            check(dst, prev, t.rank());
        });
        // A ring's neighbours: one connection per rank (both ends in this process), and every port still open,
        // since no rank has heard from every higher one.
        assertEquals(size + 2 * size, sockets() - before, "sockets after a ring step");
        // Every pair at once (an alltoall) connects everyone; each port closes once all its higher ranks have come.
        onEveryRank(ts, t -> {
            for (int step = 1; step < size; step++) {
                int to = (t.rank() + step) % size;
                int from = (t.rank() + size - step) % size;
                MemorySegment src = MemorySegment.ofArray(new byte[64]);
                MemorySegment dst = MemorySegment.ofArray(new byte[64]);
                fill(src, t.rank(), to);
                t.sendRecv(to, src, 0, 64, from, dst, 0, 64);
                check(dst, from, t.rank());
            }
        });
        assertEquals(size * (size - 1), sockets() - before, "sockets after an alltoall");
    }

    @Test
    void aPeerThatNeverExchangesIsNamedAsTheOneThatNeverConnected() throws Exception {
        List<TcpTransport> ts = mesh(3, Duration.ofMillis(500));
        KoloTimeoutException e = assertThrows(KoloTimeoutException.class,
                () -> ts.get(0).recv(2, MemorySegment.ofArray(new byte[16]), 0, 16));
        assertEquals(2, assertInstanceOf(PeerTimeoutException.class, e).waited().peer());
        assertTrue(e.getMessage().contains("waiting for rank 2 to connect"), e.getMessage());
        assertTrue(e.getMessage().contains("KOLO_TIMEOUT_SECONDS"), e.getMessage());
    }

    @Test
    void peerThatClosesIsNamedByTheOtherSidesRecv() throws Exception {
        List<TcpTransport> ts = mesh(3, TIMEOUT);
        exchange(ts.get(0), ts.get(2));
        CompletableFuture<RuntimeException> seen = CompletableFuture.supplyAsync(() -> assertThrows(
                RuntimeException.class, () -> ts.get(0).recv(2, MemorySegment.ofArray(new byte[16]), 0, 16)), pool);
        Thread.sleep(200);
        long start = System.nanoTime();
        ts.get(2).close();
        RuntimeException e = seen.get(5, TimeUnit.SECONDS);
        assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(2), "noticed too late");
        PeerFailedException pf = assertInstanceOf(PeerFailedException.class, e);
        assertEquals(2, pf.peer());
        assertTrue(pf.getMessage().contains("lost connection to rank 2"), pf.getMessage());

        // Dead from now on: the same exception again, at once, for any call.
        RuntimeException again = assertThrows(RuntimeException.class,
                () -> ts.get(0).send(1, MemorySegment.ofArray(new byte[1]), 0, 1));
        assertSame(pf, again);
    }

    @Test
    void abortFailsAPendingRecvAndPeersNotice() throws Exception {
        List<TcpTransport> ts = mesh(2, TIMEOUT);
        exchange(ts.get(0), ts.get(1));
        Future<RuntimeException> blocked = pool.submit(() -> assertThrows(RuntimeException.class,
                () -> ts.get(0).recv(1, MemorySegment.ofArray(new byte[8]), 0, 8)));
        Future<RuntimeException> peer = pool.submit(() -> assertThrows(RuntimeException.class,
                () -> ts.get(1).recv(0, MemorySegment.ofArray(new byte[8]), 0, 8)));
        Thread.sleep(200);
        KoloException cause = new KoloException("rank 0 gave up");
        ts.get(0).abort(cause);
        assertSame(cause, blocked.get(5, TimeUnit.SECONDS));
        PeerFailedException pf = assertInstanceOf(PeerFailedException.class, peer.get(5, TimeUnit.SECONDS));
        assertEquals(0, pf.peer());
        ts.get(0).abort(new KoloException("second"));
        assertSame(cause, assertThrows(RuntimeException.class,
                () -> ts.get(0).recv(1, MemorySegment.ofArray(new byte[8]), 0, 8)));
    }

    @Test
    void timeoutNamesThePeerAndWhatWasAwaited() throws Exception {
        List<TcpTransport> quick = mesh(2, Duration.ofMillis(300));
        exchange(quick.get(0), quick.get(1));
        KoloTimeoutException e = assertThrows(KoloTimeoutException.class,
                () -> quick.get(0).recv(1, MemorySegment.ofArray(new byte[1024]), 0, 1024));
        assertTrue(e.getMessage().contains("receive 1024 bytes from rank 1"), e.getMessage());
        assertTrue(e.getMessage().contains("KOLO_TIMEOUT_SECONDS"), e.getMessage());
    }

    @Test
    void startTimeoutNamesEveryMissingRank() {
        KoloTimeoutException e = assertThrows(KoloTimeoutException.class, () -> TcpTransport.connect(
                1, 4, LOOPBACK, store, secret, Duration.ofMillis(300), TIMEOUT));
        assertTrue(e.getMessage().contains("ranks 0, 2, 3"), e.getMessage());
        assertTrue(e.getMessage().contains("KOLO_START_TIMEOUT_SECONDS"), e.getMessage());
    }

    @Test
    void firstExchangeNamesAHigherRankThatNeverConnects() {
        // Rank 1 "published" an address but never connects back to rank 0.
        store.put("addr/1", "127.0.0.1:9");
        try (TcpTransport t = TcpTransport.connect(0, 2, LOOPBACK, store, secret, START, Duration.ofMillis(300))) {
            KoloTimeoutException e = assertThrows(KoloTimeoutException.class,
                    () -> t.send(1, MemorySegment.ofArray(new byte[4]), 0, 4));
            assertTrue(e.getMessage().contains("rank 1 to connect"), e.getMessage());
            assertTrue(e.getMessage().contains("KOLO_TIMEOUT_SECONDS"), e.getMessage());
        }
    }

    @Test
    void rankWithAnotherSecretNeverJoins() throws Exception {
        Duration timeout = Duration.ofMillis(1500);
        // Rank 0 waits longer than the stranger tries, so its every attempt meets the listener and is refused for
        // the secret, not for a listener already closed (which a loaded machine could make it meet last).
        // Published early so that rank 0's start, which reads it, returns; rank 1's own start replaces it.
        store.put("addr/1", "127.0.0.1:9");
        TcpTransport rank0 = TcpTransport.connect(0, 2, LOOPBACK, store, secret, START, timeout.multipliedBy(2));
        opened.add(rank0);
        TcpTransport rank1 = TcpTransport.connect(1, 2, LOOPBACK, store, JobSecret.generate(), START, timeout);
        opened.add(rank1);
        Future<?> zero = pool.submit(() -> rank0.recv(1, MemorySegment.ofArray(new byte[8]), 0, 8));
        Future<?> one = pool.submit(() -> rank1.send(0, MemorySegment.ofArray(new byte[8]), 0, 8));
        ExecutionException e0 = assertThrows(ExecutionException.class, () -> zero.get(10, TimeUnit.SECONDS));
        ExecutionException e1 = assertThrows(ExecutionException.class, () -> one.get(10, TimeUnit.SECONDS));
        assertInstanceOf(KoloTimeoutException.class, e0.getCause());
        assertTrue(e0.getCause().getMessage().contains("rank 1"), e0.getCause().getMessage());
        assertInstanceOf(KoloTimeoutException.class, e1.getCause());
        assertTrue(e1.getCause().getMessage().contains("connecting to rank 0"), e1.getCause().getMessage());
        assertTrue(e1.getCause().getMessage().contains("job secret"), e1.getCause().getMessage());
    }

    @Test
    void singleRankNeedsNoNetwork() {
        try (TcpTransport t = TcpTransport.connect(0, 1, LOOPBACK, store, secret, START, TIMEOUT)) {
            assertEquals(0, t.rank());
            assertEquals(1, t.size());
            assertThrows(IllegalArgumentException.class,
                    () -> t.send(0, MemorySegment.ofArray(new byte[1]), 0, 1));
        }
    }

    @Test
    void rejectsBadArguments() throws Exception {
        List<TcpTransport> ts = mesh(2, TIMEOUT);
        MemorySegment s = MemorySegment.ofArray(new byte[8]);
        assertThrows(IllegalArgumentException.class, () -> ts.get(0).send(0, s, 0, 1));
        assertThrows(IllegalArgumentException.class, () -> ts.get(0).send(2, s, 0, 1));
        assertThrows(IndexOutOfBoundsException.class, () -> ts.get(0).send(1, s, 4, 8));
        assertArrayEquals(new byte[8], s.toArray(ValueLayout.JAVA_BYTE));
    }
}
