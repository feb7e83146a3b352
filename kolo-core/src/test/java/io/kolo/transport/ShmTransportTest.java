package io.kolo.transport;

import io.kolo.KoloTimeoutException;
import io.kolo.bootstrap.RendezvousServer;
import io.kolo.launch.JobSecret;
import org.junit.jupiter.api.Test;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** {@link ShmTransport} over real files in /dev/shm: ranks as threads, plus one rank in a separate process. */
class ShmTransportTest {
    private static final Path SHM = Path.of("/dev/shm");

    static byte pattern(int from, long i) {
        return (byte) (from * 31 + i * 7 + (i >>> 9));
    }

    static MemorySegment filled(Arena arena, int from, long bytes) {
        MemorySegment s = arena.allocate(Math.max(1, bytes));
        for (long i = 0; i < bytes; i++) {
            s.set(ValueLayout.JAVA_BYTE, i, pattern(from, i));
        }
        return s;
    }

    static void assertPattern(MemorySegment s, int from, long bytes) {
        for (long i = 0; i < bytes; i++) {
            if (s.get(ValueLayout.JAVA_BYTE, i) != pattern(from, i)) {
                throw new AssertionError("byte " + i + " of " + bytes + " from rank " + from + " is wrong");
            }
        }
    }

    static List<Path> filesOf(String job) throws IOException {
        try (Stream<Path> s = Files.list(SHM)) {
            return s.filter(p -> p.getFileName().toString().startsWith("kolo-" + job + "-")).toList();
        }
    }

    @Test
    void messagesWrapAroundAndOutgrowATinyRing() throws Exception {
        assumeTrue(ShmSegments.available(), "no writable /dev/shm");
        List<Transport> t = ShmGroup.open(2, 4096, Duration.ofSeconds(20));
        long[] sizes = {1, 4095, 4096, 4097, 10_007, 1 << 20, 3};
        try (Arena arena = Arena.ofShared()) {
            CompletableFuture<Void> sender = CompletableFuture.runAsync(() -> {
                for (long n : sizes) {
                    t.get(0).send(1, filled(arena, 0, n), 0, n);
                }
            });
            for (long n : sizes) {
                MemorySegment dst = arena.allocate(n);
                // A receive takes exactly one send's bytes (the Transport contract), however the ring cuts them.
                t.get(1).recv(0, dst, 0, n);
                assertPattern(dst, 0, n);
            }
            sender.get(20, TimeUnit.SECONDS);
        } finally {
            t.forEach(Transport::close);
        }
    }

    @Test
    void sendRecvMovesBothDirectionsAtOnceAroundARing() throws Exception {
        assumeTrue(ShmSegments.available(), "no writable /dev/shm");
        int n = 5;
        long bytes = (3L << 20) + 5; // far larger than the 64 KiB rings: blocking sends would deadlock
        List<Transport> t = ShmGroup.open(n, 65536, Duration.ofSeconds(30));
        try (Arena arena = Arena.ofShared()) {
            List<CompletableFuture<Void>> ranks = new ArrayList<>();
            for (int r = 0; r < n; r++) {
                int rank = r;
                ranks.add(CompletableFuture.runAsync(() -> {
                    MemorySegment src = filled(arena, rank, bytes);
                    MemorySegment dst = arena.allocate(bytes);
                    int right = (rank + 1) % n;
                    int left = (rank + n - 1) % n;
                    t.get(rank).sendRecv(right, src, 0, bytes, left, dst, 0, bytes);
                    assertPattern(dst, left, bytes);
                    // Both peers the same rank: a pairwise exchange.
                    int partner = rank ^ 1;
                    if (partner < n) {
                        t.get(rank).sendRecv(partner, src, 0, bytes, partner, dst, 0, bytes);
                        assertPattern(dst, partner, bytes);
                    }
                }, Thread::startVirtualThread));
            }
            for (CompletableFuture<Void> f : ranks) {
                f.get(60, TimeUnit.SECONDS);
            }
        } finally {
            t.forEach(Transport::close);
        }
    }

    @Test
    void filesAreGoneOnceSetUpAndCreatedOwnerOnly() throws Exception {
        assumeTrue(ShmSegments.available(), "no writable /dev/shm");
        String job = ShmGroup.newJob();
        List<Transport> t = ShmGroup.open(3, job, 65536, Duration.ofSeconds(20));
        try {
            assertEquals(List.of(), filesOf(job), "segments must be unlinked once every rank mapped them");
        } finally {
            t.forEach(Transport::close);
        }
        try (Arena arena = Arena.ofShared()) {
            ShmFile f = ShmFile.create(SHM, job, 0, 2, 4096, arena);
            try {
                assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(f.path())));
                assertEquals(ProcessHandle.current().pid(), ShmFile.pidOf(f.path().getFileName().toString()));
            } finally {
                f.unlink();
            }
        }
        assertEquals(List.of(), filesOf(job));
    }

    /** The memory is seen as plain native memory, one segment class with the buffers' (see ShmFile.map). */
    @Test
    void aMappedInboxIsViewedAsPlainNativeMemoryOfItsArena() throws Exception {
        assumeTrue(ShmSegments.available(), "no writable /dev/shm");
        MemorySegment bell;
        try (Arena arena = Arena.ofShared()) {
            ShmFile f = ShmFile.create(SHM, ShmGroup.newJob(), 0, 2, 4096, arena);
            try {
                ShmFile peer = ShmFile.open(f.path(), 0, 2, 4096, arena, 1);
                for (ShmFile each : List.of(f, peer)) {
                    assertTrue(each.bellWord().isNative());
                    assertFalse(each.bellWord().isMapped(), "still a mapped segment");
                }
                peer.ringBell();
                assertEquals(1, f.bell(), "both views share the file's memory");
                bell = f.bellWord();
            } finally {
                f.unlink();
            }
        }
        assertThrows(IllegalStateException.class, () -> bell.get(ValueLayout.JAVA_INT, 0), "closing the arena ends it");
    }

    /** Where the JVM denies Kolo native access, viewing the memory anew is refused: the mapped segment serves. */
    @Test
    void withoutNativeAccessTheMappedSegmentServes() throws Exception {
        assumeTrue(ShmSegments.available(), "no writable /dev/shm");
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Process p = new ProcessBuilder(java, "--illegal-native-access=deny", "-cp", System.getProperty("java.class.path"),
                ShmFileWithoutNativeAccess.class.getName(), SHM.toString()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(30, TimeUnit.SECONDS), out);
        assertEquals(0, p.exitValue(), out);
        assertEquals(List.of("mapped=true bell=1"), out.lines().toList());
    }

    @Test
    void receiveTimesOutNamingThePeer() {
        assumeTrue(ShmSegments.available(), "no writable /dev/shm");
        List<Transport> t = ShmGroup.open(3, 65536, Duration.ofMillis(300));
        try (Arena arena = Arena.ofShared()) {
            MemorySegment dst = arena.allocate(100);
            KoloTimeoutException e = assertThrows(KoloTimeoutException.class, () -> t.get(0).recv(2, dst, 0, 100));
            assertTrue(e.getMessage().contains("from rank 2"), e.getMessage());
            assertTrue(e.getMessage().contains("KOLO_TIMEOUT_SECONDS"), e.getMessage());
            // A timed-out transport stays failed, and its peers learn that it aborted.
            assertThrows(KoloTimeoutException.class, () -> t.get(0).recv(1, dst, 0, 1));
            PeerFailedException p = assertThrows(PeerFailedException.class, () -> t.get(1).recv(0, dst, 0, 100));
            assertEquals(0, p.peer());
        } finally {
            t.forEach(Transport::close);
        }
    }

    @Test
    void abortOrCloseOfAPeerFailsItsWaitingPartners() throws Exception {
        assumeTrue(ShmSegments.available(), "no writable /dev/shm");
        List<Transport> t = ShmGroup.open(4, 4096, Duration.ofSeconds(60));
        try (Arena arena = Arena.ofShared()) {
            MemorySegment big = arena.allocate(1 << 20);
            MemorySegment small = arena.allocate(10);
            // Its send fits in the ring and completes; only the receive half is left waiting on rank 1.
            CompletableFuture<Throwable> exchanger = CompletableFuture.supplyAsync(() -> {
                try {
                    t.get(3).sendRecv(1, small, 0, 10, 1, small, 0, 10);
                    return null;
                } catch (Throwable e) {
                    return e;
                }
            });
            CompletableFuture<Throwable> sender = CompletableFuture.supplyAsync(() -> {
                try {
                    t.get(0).send(1, big, 0, big.byteSize()); // blocks: the ring holds 4 KiB
                    return null;
                } catch (Throwable e) {
                    return e;
                }
            });
            CompletableFuture<Throwable> receiver = CompletableFuture.supplyAsync(() -> {
                try {
                    t.get(2).recv(1, big, 0, 10);
                    return null;
                } catch (Throwable e) {
                    return e;
                }
            });
            Thread.sleep(200);
            t.get(1).abort(new IllegalStateException("rank 1 gave up"));
            Throwable s = sender.get(10, TimeUnit.SECONDS);
            Throwable r = receiver.get(10, TimeUnit.SECONDS);
            PeerFailedException ps = assertInstance(PeerFailedException.class, s);
            assertEquals(1, ps.peer());
            assertTrue(ps.getMessage().contains("rank 1 aborted"), ps.getMessage());
            assertEquals(1, assertInstance(PeerFailedException.class, r).peer());
            assertEquals(1, assertInstance(PeerFailedException.class, exchanger.get(10, TimeUnit.SECONDS)).peer());
            IllegalStateException own = assertThrows(IllegalStateException.class, () -> t.get(1).send(0, big, 0, 1));
            assertEquals("rank 1 gave up", own.getMessage());
        } finally {
            t.forEach(Transport::close);
        }
    }

    @Test
    void unreachablePeerIsABadArgument() {
        assumeTrue(ShmSegments.available(), "no writable /dev/shm");
        List<Transport> t = ShmGroup.open(2, 4096, Duration.ofSeconds(5));
        try (Arena arena = Arena.ofShared()) {
            MemorySegment s = arena.allocate(8);
            assertThrows(IllegalArgumentException.class, () -> t.get(0).send(0, s, 0, 8));
            assertThrows(IllegalArgumentException.class, () -> t.get(0).send(2, s, 0, 8));
        } finally {
            t.forEach(Transport::close);
        }
    }

    @Test
    void staleSegmentsOfDeadProcessesAreRemovedAndLiveOnesKept() throws Exception {
        assumeTrue(ShmSegments.available(), "no writable /dev/shm");
        Process gone = new ProcessBuilder("true").start();
        gone.waitFor();
        String job = ShmGroup.newJob();
        Path dead = SHM.resolve(ShmFile.name(job, 0, gone.pid()));
        Path live = SHM.resolve(ShmFile.name(job, 1, ProcessHandle.current().pid()));
        Files.write(dead, new byte[16]);
        Files.write(live, new byte[16]);
        try {
            assertTrue(ShmFile.removeStale(SHM) >= 1);
            assertFalse(Files.exists(dead), "segment of a dead process must be removed");
            assertTrue(Files.exists(live), "segment of a live process must stay");
            assertEquals(1, ShmFile.removeJob(SHM, job));
            assertEquals(List.of(), filesOf(job));
        } finally {
            Files.deleteIfExists(dead);
            Files.deleteIfExists(live);
        }
    }

    /** Starts {@link ShmPeerProcess} as rank 1: it connects, sends {@code bytes} to rank 0, prints "sent" and waits. */
    private static Process startPeer(RendezvousServer store, JobSecret secret, String job, long bytes)
            throws IOException {
        return startPeer(store, secret, job, bytes, 2);
    }

    private static Process startPeer(RendezvousServer store, JobSecret secret, String job, long bytes, int size)
            throws IOException {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        ProcessBuilder pb = new ProcessBuilder(java, "--enable-native-access=ALL-UNNAMED", "-cp",
                System.getProperty("java.class.path"), ShmPeerProcess.class.getName(),
                store.address().getAddress().getHostAddress(), String.valueOf(store.address().getPort()), job,
                String.valueOf(bytes), String.valueOf(size))
                .redirectErrorStream(true);
        pb.environment().put("KOLO_SECRET", secret.toHex());
        return pb.start();
    }

    /**
     * Rank 1 of three is a real process that dies; rank 0 saw it and aborts. Rank 2, which waits on rank 0, names rank 1
     * as the cause, not rank 0: under Slurm the job's store may live in rank 0 and go down with it, so rank 2 cannot
     * learn the first failure from there.
     */
    @Test
    void aRankWaitingOnAnAbortedPartnerNamesTheHostRankThatDied() throws Exception {
        assumeTrue(ShmSegments.available(), "no writable /dev/shm");
        JobSecret secret = JobSecret.generate();
        String job = ShmGroup.newJob();
        int[] all = {0, 1, 2};
        try (RendezvousServer store = RendezvousServer.start(InetAddress.getLoopbackAddress(), 0, secret)) {
            Process peer = startPeer(store, secret, job, 10, 3);
            try {
                // Each on a thread of its own: both wait in setup until all three ranks arrived.
                CompletableFuture<ShmTransport> first = CompletableFuture.supplyAsync(() -> ShmTransport.connect(
                        0, 3, all, store, job, 65536, Duration.ofSeconds(30), Duration.ofSeconds(120)),
                        r -> new Thread(r).start());
                CompletableFuture<ShmTransport> third = CompletableFuture.supplyAsync(() -> ShmTransport.connect(
                        2, 3, all, store, job, 65536, Duration.ofSeconds(30), Duration.ofSeconds(120)),
                        r -> new Thread(r).start());
                ShmTransport t0 = first.get(60, TimeUnit.SECONDS);
                ShmTransport t2 = third.get(60, TimeUnit.SECONDS);
                try (Arena arena = Arena.ofShared()) {
                    MemorySegment dst = arena.allocate(10);
                    t0.recv(1, dst, 0, 10);
                    BufferedReader out = new BufferedReader(new InputStreamReader(peer.getInputStream(),
                            StandardCharsets.UTF_8));
                    assertEquals("sent", out.readLine());
                    peer.destroyForcibly().waitFor();
                    CompletableFuture<Throwable> waiting = CompletableFuture.supplyAsync(() -> {
                        try {
                            t2.recv(0, dst, 0, 10); // rank 0 never sends this
                            return null;
                        } catch (Throwable e) {
                            return e;
                        }
                    });
                    Thread.sleep(100);
                    t0.abort(new IllegalStateException("rank 0 lost rank 1"));
                    PeerFailedException p = assertInstance(PeerFailedException.class,
                            waiting.get(30, TimeUnit.SECONDS));
                    assertEquals(1, p.peer(), p.getMessage());
                    assertFalse(p.peerAborted());
                    assertTrue(p.getMessage().contains("died"), p.getMessage());
                } finally {
                    t0.close();
                    t2.close();
                }
            } finally {
                peer.destroyForcibly();
            }
        }
    }

    /**
     * Rank 2 sends to rank 1, a real process that never receives from it and so never sets up their ring; rank 1 is
     * killed with SIGKILL meanwhile: rank 2's wait for the ring ends fast naming rank 1, not at the timeout.
     */
    @Test
    void aSenderWaitingForTheRingOfAPeerThatDiesFailsFastNamingIt() throws Exception {
        assumeTrue(ShmSegments.available(), "no writable /dev/shm");
        JobSecret secret = JobSecret.generate();
        String job = ShmGroup.newJob();
        int[] all = {0, 1, 2};
        try (RendezvousServer store = RendezvousServer.start(InetAddress.getLoopbackAddress(), 0, secret)) {
            Process peer = startPeer(store, secret, job, 10, 3);
            try {
                CompletableFuture<ShmTransport> first = CompletableFuture.supplyAsync(() -> ShmTransport.connect(
                        0, 3, all, store, job, 65536, Duration.ofSeconds(30), Duration.ofSeconds(120)),
                        r -> new Thread(r).start());
                CompletableFuture<ShmTransport> third = CompletableFuture.supplyAsync(() -> ShmTransport.connect(
                        2, 3, all, store, job, 65536, Duration.ofSeconds(30), Duration.ofSeconds(120)),
                        r -> new Thread(r).start());
                ShmTransport t0 = first.get(60, TimeUnit.SECONDS);
                ShmTransport t2 = third.get(60, TimeUnit.SECONDS);
                try (Arena arena = Arena.ofShared()) {
                    MemorySegment dst = arena.allocate(10);
                    t0.recv(1, dst, 0, 10);
                    BufferedReader out = new BufferedReader(new InputStreamReader(peer.getInputStream(),
                            StandardCharsets.UTF_8));
                    assertEquals("sent", out.readLine());
                    CompletableFuture<Throwable> waiting = CompletableFuture.supplyAsync(() -> {
                        try {
                            t2.send(1, dst, 0, 10); // rank 1 never receives it: its ring from rank 2 never comes
                            return null;
                        } catch (Throwable e) {
                            return e;
                        }
                    });
                    Thread.sleep(100);
                    assertFalse(waiting.isDone(), "the send waits for rank 1's ring");
                    peer.destroyForcibly().waitFor();
                    PeerFailedException p = assertInstance(PeerFailedException.class,
                            waiting.get(30, TimeUnit.SECONDS));
                    assertEquals(1, p.peer(), p.getMessage());
                    assertTrue(p.getMessage().contains("died"), p.getMessage());
                } finally {
                    t0.close();
                    t2.close();
                }
            } finally {
                peer.destroyForcibly();
            }
        }
    }

    /** Rank 1 is a real process killed with SIGKILL mid-message: rank 0 fails fast naming it; nothing is left. */
    @Test
    void peerKilledMidMessageIsDetectedThroughItsPid() throws Exception {
        assumeTrue(ShmSegments.available(), "no writable /dev/shm");
        JobSecret secret = JobSecret.generate();
        String job = ShmGroup.newJob();
        long total = 1 << 20;
        long sent = 300_000;
        try (RendezvousServer store = RendezvousServer.start(InetAddress.getLoopbackAddress(), 0, secret)) {
            Process peer = startPeer(store, secret, job, sent);
            try {
                CompletableFuture<ShmTransport> mine = CompletableFuture.supplyAsync(() -> ShmTransport.connect(
                        0, 2, new int[] {0, 1}, store, job, 65536, Duration.ofSeconds(30), Duration.ofSeconds(120)));
                ShmTransport t = mine.get(60, TimeUnit.SECONDS);
                try (Arena arena = Arena.ofShared()) {
                    MemorySegment dst = arena.allocate(total);
                    t.recv(1, dst, 0, sent);
                    BufferedReader out = new BufferedReader(new InputStreamReader(peer.getInputStream(),
                            StandardCharsets.UTF_8));
                    assertEquals("sent", out.readLine());
                    assertEquals(List.of(), filesOf(job), "no segment may outlive setup");
                    CompletableFuture<Throwable> waiting = CompletableFuture.supplyAsync(() -> {
                        try {
                            t.recv(1, dst, 0, total); // rank 1 never sends this
                            return null;
                        } catch (Throwable e) {
                            return e;
                        }
                    });
                    Thread.sleep(100);
                    peer.destroyForcibly().waitFor();
                    // Well inside the 120 s timeout: the pid check, not the timeout, must end the wait.
                    Throwable e = waiting.get(30, TimeUnit.SECONDS);
                    PeerFailedException p = assertInstance(PeerFailedException.class, e);
                    assertEquals(1, p.peer());
                    assertTrue(p.getMessage().contains("died"), p.getMessage());
                } finally {
                    t.close();
                }
                assertEquals(List.of(), filesOf(job));
            } finally {
                peer.destroyForcibly();
            }
        }
    }

    /**
     * Rank 1, a real process, is killed while rank 0 waits for it to read a large message straight from rank 0's
     * memory: rank 0 fails fast naming it, rather than waiting out the timeout for a read that never comes.
     */
    @Test
    void peerKilledBeforeReadingALargeMessageFromThisRanksMemoryFailsTheSenderFast() throws Exception {
        assumeTrue(ShmSegments.available(), "no writable /dev/shm");
        JobSecret secret = JobSecret.generate();
        String job = ShmGroup.newJob();
        try (RendezvousServer store = RendezvousServer.start(InetAddress.getLoopbackAddress(), 0, secret)) {
            Process peer = startPeer(store, secret, job, 0);
            try {
                ShmTransport t = CompletableFuture.supplyAsync(() -> ShmTransport.connect(0, 2, new int[] {0, 1},
                        store, job, 65536, Duration.ofSeconds(30), Duration.ofSeconds(120))).get(60, TimeUnit.SECONDS);
                try (Arena arena = Arena.ofShared()) {
                    assumeTrue(t.readDirectlyBy(1), "skipped: process_vm_readv is refused here, so large messages go"
                            + " through the ring (covered by peerKilledMidMessageIsDetectedThroughItsPid)");
                    t.recv(1, arena.allocate(1), 0, 0);
                    BufferedReader out = new BufferedReader(new InputStreamReader(peer.getInputStream(),
                            StandardCharsets.UTF_8));
                    assertEquals("sent", out.readLine());
                    MemorySegment big = filled(arena, 0, 4L << 20);
                    CompletableFuture<Throwable> sending = CompletableFuture.supplyAsync(() -> {
                        try {
                            t.send(1, big, 0, big.byteSize()); // rank 1 never receives it
                            return null;
                        } catch (Throwable e) {
                            return e;
                        }
                    }, Thread::startVirtualThread);
                    Thread.sleep(200);
                    assertFalse(sending.isDone(), "the send must wait until rank 1 has read the message");
                    peer.destroyForcibly().waitFor();
                    Throwable e = sending.get(30, TimeUnit.SECONDS);
                    PeerFailedException p = assertInstance(PeerFailedException.class, e);
                    assertEquals(1, p.peer());
                    assertTrue(p.getMessage().contains("died"), p.getMessage());
                } finally {
                    t.close();
                }
            } finally {
                peer.destroyForcibly();
            }
        }
    }

    /** A 4 MiB tmpfs (needs root to mount): rings shrink to fit; a 64 KiB one is refused with advice. */
    @Test
    void ringsShrinkToFitASmallShmAndTooSmallIsExplained(@org.junit.jupiter.api.io.TempDir Path tmp) throws Exception {
        Path small = Files.createDirectory(tmp.resolve("small"));
        Path tiny = Files.createDirectory(tmp.resolve("tiny"));
        assumeTrue(mount(small, "4m") && mount(tiny, "64k"), "skipped: cannot mount a tmpfs (needs root)");
        try {
            List<Transport> t = ShmGroup.open(small, 3, ShmGroup.newJob(), ShmTransport.DEFAULT_RING_BYTES,
                    Duration.ofSeconds(20));
            try (Arena arena = Arena.ofShared()) {
                long bytes = 3 << 20;
                CompletableFuture<Void> sender = CompletableFuture.runAsync(
                        () -> t.get(2).send(0, filled(arena, 2, bytes), 0, bytes));
                MemorySegment dst = arena.allocate(bytes);
                t.get(0).recv(2, dst, 0, bytes);
                assertPattern(dst, 2, bytes);
                sender.get(20, TimeUnit.SECONDS);
            } finally {
                t.forEach(Transport::close);
            }
            try (Stream<Path> left = Files.list(small)) {
                assertEquals(List.of(), left.toList());
            }
            AssertionError e = assertThrows(AssertionError.class, () -> ShmGroup.open(tiny, 3, ShmGroup.newJob(),
                    ShmTransport.DEFAULT_RING_BYTES, Duration.ofSeconds(20)));
            assertTrue(e.getMessage().contains("--shm-size") && e.getMessage().contains("KOLO_TRANSPORT=tcp"),
                    e.getMessage());
        } finally {
            new ProcessBuilder("umount", small.toString()).start().waitFor();
            new ProcessBuilder("umount", tiny.toString()).start().waitFor();
        }
    }

    private static boolean mount(Path dir, String size) throws Exception {
        Process p = new ProcessBuilder("mount", "-t", "tmpfs", "-o", "size=" + size + ",mode=0700", "kolo-test",
                dir.toString()).redirectErrorStream(true).start();
        return p.waitFor(20, TimeUnit.SECONDS) && p.exitValue() == 0;
    }

    static <T> T assertInstance(Class<T> type, Throwable e) {
        if (!type.isInstance(e)) {
            throw new AssertionError("expected " + type.getSimpleName() + " but got " + e, e);
        }
        return type.cast(e);
    }
}
