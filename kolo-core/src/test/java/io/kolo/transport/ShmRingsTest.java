package io.kolo.transport;

import io.kolo.KoloException;
import io.kolo.bootstrap.InMemoryStore;
import io.kolo.bootstrap.KeyValueStore;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntUnaryOperator;
import java.util.stream.IntStream;

import static io.kolo.transport.ShmTransportTest.assertPattern;
import static io.kolo.transport.ShmTransportTest.filled;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * What a host's shared memory costs as its ranks grow, over real files in /dev/shm with ranks as threads: the store
 * requests of setup, and rings only for the pairs that exchange, set up on their first exchange.
 */
class ShmRingsTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(20);

    /** Counts the requests a remote store would answer: one per call, a table read ({@code getEach}) included. */
    static final class CountingStore implements KeyValueStore {
        private final InMemoryStore store = new InMemoryStore();
        final AtomicInteger requests = new AtomicInteger();

        @Override
        public void put(String key, String value) {
            requests.incrementAndGet();
            store.put(key, value);
        }

        @Override
        public boolean putIfAbsent(String key, String value) {
            requests.incrementAndGet();
            return store.putIfAbsent(key, value);
        }

        @Override
        public Optional<String> tryGet(String key) {
            requests.incrementAndGet();
            return store.tryGet(key);
        }

        @Override
        public String get(String key, Duration timeout) {
            requests.incrementAndGet();
            return store.get(key, timeout);
        }

        @Override
        public List<String> getEach(String prefix, int count, Duration timeout) {
            requests.incrementAndGet();
            return store.getEach(prefix, count, timeout);
        }

        @Override
        public void close() {
            store.close();
        }
    }

    private static List<Transport> open(Path dir, int n, long ringBytes, KeyValueStore store) {
        int[] all = IntStream.range(0, n).toArray();
        String job = ShmGroup.newJob();
        return ShmGroup.connectAll(n, rank -> ShmTransport.connect(dir, rank, n, all, store, job, ringBytes, TIMEOUT,
                TIMEOUT));
    }

    @Test
    void setupCostsTheStoreTheSameFiveRequestsPerRankWhateverTheHostsRanks() {
        assumeTrue(ShmSegments.available(), "no writable /dev/shm");
        for (int n : new int[]{2, 4, 16}) {
            CountingStore store = new CountingStore();
            List<Transport> t = open(ShmTransport.DIR, n, 65536, store);
            t.forEach(Transport::close);
            // Per rank: read the ring size, publish its segment, read the host's, say it mapped them, read that of
            // all; and the host's lowest rank's decision on the ring size.
            assertEquals(5 * n + 1, store.requests.get(), n + " ranks");
        }
    }

    /** Every rank sends to {@code to(rank)} and receives from {@code from(rank)} at once, {@code bytes} each. */
    private static void exchange(List<Transport> t, IntUnaryOperator to, IntUnaryOperator from, long bytes)
            throws Exception {
        int n = t.size();
        try (Arena arena = Arena.ofShared()) {
            List<CompletableFuture<Void>> ranks = new ArrayList<>();
            for (int r = 0; r < n; r++) {
                int rank = r;
                ranks.add(CompletableFuture.runAsync(() -> {
                    MemorySegment dst = arena.allocate(bytes);
                    t.get(rank).sendRecv(to.applyAsInt(rank), filled(arena, rank, bytes), 0, bytes,
                            from.applyAsInt(rank), dst, 0, bytes);
                    assertPattern(dst, from.applyAsInt(rank), bytes);
                }, command -> Thread.ofPlatform().start(command)));
            }
            for (CompletableFuture<Void> f : ranks) {
                f.get(60, TimeUnit.SECONDS);
            }
        }
    }

    private static int rings(Transport t) {
        return ((ShmTransport) t).ringsInUse();
    }

    @Test
    void aRingJobHoldsTwoRingsPerRankAndRecursiveDoublingOnePairPerRoundWhileAlltoallGetsThemAll() throws Exception {
        assumeTrue(ShmSegments.available(), "no writable /dev/shm");
        int n = 8;
        List<Transport> t = ShmGroup.open(n, 65536, TIMEOUT);
        try {
            assertEquals(List.of(0, 0, 0, 0, 0, 0, 0, 0), t.stream().map(ShmRingsTest::rings).toList(),
                    "no ring before the first exchange");
            // Larger than a ring, so it streams through it.
            for (int round = 0; round < 3; round++) {
                exchange(t, r -> (r + 1) % n, r -> (r + n - 1) % n, 200_000);
            }
            for (int r = 0; r < n; r++) {
                assertEquals(2, rings(t.get(r)), "rank " + r + " after ring steps: its left and right neighbours");
            }
            for (int bit = 1; bit < n; bit <<= 1) {
                int b = bit;
                exchange(t, r -> r ^ b, r -> r ^ b, 1000);
            }
            for (int r = 0; r < n; r++) {
                // Received from: the left neighbour and each round's partner; sent to: the right one and the same.
                java.util.Set<Integer> in = new java.util.HashSet<>(List.of((r + n - 1) % n, r ^ 1, r ^ 2, r ^ 4));
                java.util.Set<Integer> out = new java.util.HashSet<>(List.of((r + 1) % n, r ^ 1, r ^ 2, r ^ 4));
                assertEquals(in.size() + out.size(), rings(t.get(r)), "rank " + r + " after recursive doubling");
            }
            for (int k = 1; k < n; k++) {
                int step = k;
                exchange(t, r -> (r + step) % n, r -> (r + n - step) % n, 70_000);
            }
            for (int r = 0; r < n; r++) {
                assertEquals(2 * (n - 1), rings(t.get(r)), "rank " + r + " after an alltoall: every pair, both ways");
            }
        } finally {
            t.forEach(Transport::close);
        }
    }

    @Test
    void aSendBeforeItsReceiverEverReceivedWaitsForTheRingAndOneItNeverSetsUpTimesOutSayingSo() throws Exception {
        assumeTrue(ShmSegments.available(), "no writable /dev/shm");
        List<Transport> t = ShmGroup.open(3, 65536, Duration.ofMillis(1500));
        try (Arena arena = Arena.ofShared()) {
            long bytes = 3 << 20;
            CompletableFuture<Void> sender = CompletableFuture.runAsync(
                    () -> t.get(1).send(0, filled(arena, 1, bytes), 0, bytes));
            Thread.sleep(300);
            MemorySegment dst = arena.allocate(bytes);
            t.get(0).recv(1, dst, 0, bytes);
            assertPattern(dst, 1, bytes);
            sender.get(20, TimeUnit.SECONDS);

            io.kolo.KoloTimeoutException e = assertThrows(io.kolo.KoloTimeoutException.class,
                    () -> t.get(2).send(0, dst, 0, 100));
            assertTrue(e.getMessage().contains("to send 100 bytes to rank 0, which has not set up its shared-memory"
                    + " ring for this rank"), e.getMessage());
        } finally {
            t.forEach(Transport::close);
        }
    }

    /**
     * A 12 MiB tmpfs (needs root to mount) and 16 ranks: their planned rings fit, so the job starts and a ring
     * allreduce's pattern runs; an alltoall needs every pair's ring, more than there is room for, and fails with the
     * room there is and the room a ring needs, on a rank that then fails its partners, never a hang or a SIGBUS.
     */
    @Test
    void anAlltoallBeyondTheRoomInShmFailsNamingTheRoomAndWhatItNeeds(@org.junit.jupiter.api.io.TempDir Path tmp)
            throws Exception {
        Path small = Files.createDirectory(tmp.resolve("small"));
        Process p = new ProcessBuilder("mount", "-t", "tmpfs", "-o", "size=12m,mode=0700", "kolo-test",
                small.toString()).redirectErrorStream(true).start();
        assumeTrue(p.waitFor(20, TimeUnit.SECONDS) && p.exitValue() == 0, "skipped: cannot mount a tmpfs (needs root)");
        int n = 16;
        try {
            List<Transport> t = open(small, n, ShmTransport.DEFAULT_RING_BYTES, new InMemoryStore());
            try {
                exchange(t, r -> (r + 1) % n, r -> (r + n - 1) % n, 100_000);
                List<Throwable> failures = new ArrayList<>();
                try {
                    for (int k = 2; k < n; k++) {
                        int step = k;
                        exchange(t, r -> (r + step) % n, r -> (r + n - step) % n, 1000);
                    }
                } catch (ExecutionException e) {
                    failures.add(e.getCause());
                }
                assertEquals(1, failures.size(), "the alltoall fails");
                // Whichever rank failed first, the one that found no room says so.
                String why = null;
                for (Transport x : t) {
                    try {
                        x.send((x.rank() + 1) % n, MemorySegment.ofArray(new byte[1]), 0, 1);
                    } catch (KoloException e) {
                        if (e.getMessage().contains("could not set up its shared-memory ring")) {
                            why = e.getMessage();
                        }
                    }
                }
                assertTrue(why != null, "no rank said it found no room: " + failures);
                assertTrue(why.contains(small + " has ") && why.contains("KiB free of 12288 KiB, the ring needs 64 KiB")
                        && why.contains("--shm-size") && why.contains("KOLO_TRANSPORT=tcp"), why);
            } finally {
                t.forEach(Transport::close);
            }
        } finally {
            new ProcessBuilder("umount", small.toString()).start().waitFor();
        }
    }
}
