package io.kolo;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kolo.bootstrap.RendezvousClient;
import io.kolo.bootstrap.StoreKeys;
import io.kolo.launch.JobSecret;
import io.kolo.launch.RendezvousService;
import io.kolo.view.RankSnapshot;
import io.kolo.view.Stragglers;
import org.junit.jupiter.api.Test;

import java.net.InetAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A real job of three ranks (threads joining over TCP through a launcher's rendezvous store, as {@code kolo run}
 * starts them) with {@code KOLO_VIEW=1}, in which rank 2 sleeps before each allreduce: what the ranks publish under
 * {@code view/R} is read back from the store as the launcher's view reads it.
 */
class RankViewJobTest {
    private static final int STEPS = 25;
    private static final long SLEEP_MILLIS = 40;

    @Test
    void eachRankPublishesItsOpsAndPointsAndRankZeroNamesTheSlowRank() throws Exception {
        JobSecret secret = JobSecret.generate();
        try (RendezvousService service = RendezvousService.start(InetAddress.getLoopbackAddress(), 0, secret);
             RendezvousClient store = RendezvousClient.connect(service.address(), secret, Duration.ofSeconds(20))) {
            // The view holder's side: rank 0's snapshots as they come, every 50 ms.
            List<RankSnapshot> rankZero = new ArrayList<>();
            List<List<Long>> rankOneSeqs = new ArrayList<>();
            AtomicBoolean running = new AtomicBoolean(true);
            Thread poller = Thread.ofPlatform().start(() -> {
                while (running.get()) {
                    read(store, 0).ifPresent(s -> {
                        if (rankZero.isEmpty() || rankZero.getLast().timeMillis() != s.timeMillis()) {
                            rankZero.add(s);
                        }
                    });
                    read(store, 1).ifPresent(s -> rankOneSeqs.add(s.points().stream().map(RankSnapshot.Point::seq).toList()));
                    try {
                        Thread.sleep(50);
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            });
            List<Object> results = Ranks.fromEnvironment(3, r -> Map.of("KOLO_RANK", Integer.toString(r),
                    "KOLO_SIZE", "3", "KOLO_RENDEZVOUS_ADDR", "127.0.0.1",
                    "KOLO_RENDEZVOUS_PORT", Integer.toString(service.address().getPort()),
                    "KOLO_RENDEZVOUS_SERVER", "launcher", "KOLO_SECRET", secret.toHex(),
                    "KOLO_START_TIMEOUT_SECONDS", "30", "KOLO_TRANSPORT", "tcp",
                    "KOLO_VIEW", "1", "KOLO_VIEW_INTERVAL_MS", "100"), c -> {
                for (int step = 0; step < STEPS; step++) {
                    if (c.rank() == 2) {
                        Thread.sleep(SLEEP_MILLIS);
                    }
                    // Unnamed: each op goes to the coordinator, which sees rank 2's request come last.
                    float[] x = {c.rank(), 1, 2, 3};
                    c.allreduce(x, ReduceOp.SUM);
                    if (x[0] != 3) {
                        throw new AssertionError("allreduce gave " + x[0]);
                    }
                    c.report("loss", 10.0 / (step + 1), step);
                }
                return null;
            });
            running.set(false);
            poller.join();
            for (Object r : results) {
                assertNull(r, "every rank finished");
            }

            // Each rank's last snapshot, written as it left the job.
            for (int r = 0; r < 3; r++) {
                RankSnapshot s = read(store, r).orElseThrow(() -> new AssertionError("no view/ key"));
                assertEquals(r, s.rank());
                assertEquals(3, s.size());
                assertEquals(ProcessHandle.current().pid(), s.pid());
                assertFalse(s.host().isEmpty());
                assertEquals(0, s.generation());
                assertEquals(STEPS, s.ops(), "rank " + r + "'s ops");
                assertEquals(STEPS * 16L, s.bytes(), "rank " + r + "'s bytes (4 floats per op)");
                assertTrue(s.lastOp().startsWith("allreduce.noname."), s.lastOp());
                assertTrue(s.lastOpEndMillis() > 0 && s.lastOpEndMillis() <= s.timeMillis());
                assertEquals(0, s.resets());
                List<RankSnapshot.Point> points = s.points();
                assertEquals(STEPS, points.size());
                for (int i = 0; i < STEPS; i++) {
                    assertEquals("loss", points.get(i).name());
                    assertEquals(i, points.get(i).step());
                    assertEquals(10.0 / (i + 1), points.get(i).value());
                    assertEquals(i + 1, points.get(i).seq());
                }
                if (r != 0) {
                    assertEquals(0, s.latenessNanos().length, "only rank 0 has the coordinator's figures");
                }
            }
            RankSnapshot last = read(store, 0).orElseThrow();
            // The others waited for rank 2 (the time rank 0 and 1 spent in collectives includes that wait).
            assertTrue(last.collectiveNanos() > read(store, 2).orElseThrow().collectiveNanos());
            long[] late = last.latenessNanos();
            System.out.println("rank 0's view: lateness " + java.util.Arrays.toString(late) + " ns, last "
                    + java.util.Arrays.toString(last.lastCounts()) + ", " + rankZero.size() + " snapshots polled");
            long[] lastCounts = last.lastCounts();
            assertEquals(3, late.length);
            assertTrue(lastCounts[2] >= STEPS * 3 / 4, "rank 2 last in most ops: " + java.util.Arrays.toString(lastCounts));
            assertTrue(late[2] > late[0] && late[2] > late[1], java.util.Arrays.toString(late));
            assertTrue(late[2] / lastCounts[2] > Duration.ofMillis(SLEEP_MILLIS / 2).toNanos(),
                    "the others waited about " + SLEEP_MILLIS + " ms per op: " + late[2] / lastCounts[2] + " ns");
            assertEquals(List.of(), last.stalls());

            // The view's rule, over rank 0's snapshots as the view holder saw them, and over the last one alone.
            assertTrue(rankZero.size() >= 3, rankZero.size() + " snapshots of rank 0");
            List<RankSnapshot> window = new ArrayList<>(rankZero);
            window.add(last);
            assertArrayEquals(new boolean[]{false, false, true}, Stragglers.fromCoordinator(window));
            assertArrayEquals(new boolean[]{false, false, true}, Stragglers.fromCoordinator(List.of(last)));

            // The points' numbers grow within a snapshot and from poll to poll: a reader drops the ones it has.
            assertTrue(rankOneSeqs.size() >= 3, rankOneSeqs.toString());
            long newest = 0;
            for (List<Long> poll : rankOneSeqs) {
                for (int i = 1; i < poll.size(); i++) {
                    assertEquals(poll.get(i - 1) + 1, poll.get(i), rankOneSeqs.toString());
                }
                if (!poll.isEmpty()) {
                    assertTrue(poll.getLast() >= newest, rankOneSeqs.toString());
                    newest = poll.getLast();
                }
            }
        }
    }

    /**
     * A training loop: the same named allreduces every step, so from the second step on they run from the response
     * cache and never reach the coordinator, and rank 2 computes longer before each. The view, polling the store as
     * the launcher's does, marks rank 2 from the ranks' time in collectives, and no other rank.
     */
    @Test
    void theViewMarksASlowRankWhoseOpsRunFromTheResponseCache() throws Exception {
        JsonNode ranks = cachedLoop(SLEEP_MILLIS, true);
        assertTrue(ranks.get(2).get("straggler").asBoolean(), ranks.toString());
        assertFalse(ranks.get(0).get("straggler").asBoolean(), ranks.toString());
        assertFalse(ranks.get(1).get("straggler").asBoolean(), ranks.toString());
        // The others waited about SLEEP_MILLIS per step for rank 2: at least half of it, in all, counts.
        double waited = ranks.get(2).get("collectiveLatenessSeconds").asDouble();
        assertTrue(waited > STEPS * 2 * SLEEP_MILLIS / 2 / 1000.0, waited + " s");
        assertEquals(waited, ranks.get(2).get("latenessSeconds").asDouble(), 1e-9);
        assertEquals(0, ranks.get(0).get("collectiveLatenessSeconds").asDouble(), 0.2);
    }

    /** The same loop with every rank computing alike: the ranks' small differences mark no one. */
    @Test
    void evenRanksWhoseOpsRunFromTheResponseCacheAreNotMarked() throws Exception {
        JsonNode ranks = cachedLoop(0, false);
        for (JsonNode r : ranks) {
            assertFalse(r.get("straggler").asBoolean(), ranks.toString());
        }
    }

    /**
     * Three ranks run named allreduces in a loop, every rank computing 10 ms a step and rank 2 {@code extraMillis}
     * more, watched by a view; the view's ranks at the end. With {@code slowMarked}, rank 2 must be marked while the
     * job runs (read as the page does), before its last snapshots.
     */
    private static JsonNode cachedLoop(long extraMillis, boolean slowMarked) throws Exception {
        JobSecret secret = JobSecret.generate();
        try (RendezvousService service = RendezvousService.start(InetAddress.getLoopbackAddress(), 0, secret);
             RendezvousClient store = RendezvousClient.connect(service.address(), secret, Duration.ofSeconds(20));
             io.kolo.view.JobView view = new io.kolo.view.JobView("job", 3, false, Duration.ofMillis(100))) {
            view.watch(store);
            view.start();
            List<Boolean> markedWhileRunning = new ArrayList<>();
            List<Object> results = Ranks.fromEnvironment(3, r -> Map.of("KOLO_RANK", Integer.toString(r),
                    "KOLO_SIZE", "3", "KOLO_RENDEZVOUS_ADDR", "127.0.0.1",
                    "KOLO_RENDEZVOUS_PORT", Integer.toString(service.address().getPort()),
                    "KOLO_RENDEZVOUS_SERVER", "launcher", "KOLO_SECRET", secret.toHex(),
                    "KOLO_START_TIMEOUT_SECONDS", "30", "KOLO_TRANSPORT", "tcp",
                    "KOLO_VIEW", "1", "KOLO_VIEW_INTERVAL_MS", "100"), c -> {
                for (int step = 0; step < STEPS * 2; step++) {
                    Thread.sleep(c.rank() == 2 ? 10 + extraMillis : 10);
                    Handle<Tensor> a = c.allreduceAsync("grad.a", Tensor.of(new float[]{c.rank(), 1}), ReduceOp.SUM);
                    Handle<Tensor> b = c.allreduceAsync("grad.b", Tensor.of(new float[]{1, 2, 3}), ReduceOp.SUM);
                    if (a.await().floats()[0] != 3 || b.await().floats()[2] != 9) {
                        throw new AssertionError("allreduce gave the wrong sum");
                    }
                }
                if (c.rank() == 0) {
                    // What the page shows while the job runs, before the ranks' last snapshots.
                    markedWhileRunning.add(straggler(view, 2));
                }
                return null;
            });
            for (Object r : results) {
                assertNull(r, "every rank finished");
            }
            view.poll();
            JsonNode ranks = new ObjectMapper().readTree(view.json()).get("ranks");
            System.out.println("the view's ranks: " + ranks);
            // Rank 0's coordinator saw only the first step's two ops: no rank was last in more.
            for (JsonNode r : ranks) {
                assertTrue(r.get("lastCount").asLong() <= 2, ranks.toString());
            }
            assertEquals(List.of(slowMarked), markedWhileRunning, "rank 2 marked while the job ran: " + ranks);
            return ranks;
        }
    }

    private static boolean straggler(io.kolo.view.JobView view, int rank) {
        try {
            return new ObjectMapper().readTree(view.json()).get("ranks").get(rank)
                    .get("straggler").asBoolean();
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    /** An op rank 2 is late for shows in rank 0's snapshots as a stall naming it, and goes once rank 2 submits it. */
    @Test
    void rankZeroPublishesTheStallsItSees() throws Exception {
        JobSecret secret = JobSecret.generate();
        try (RendezvousService service = RendezvousService.start(InetAddress.getLoopbackAddress(), 0, secret);
             RendezvousClient store = RendezvousClient.connect(service.address(), secret, Duration.ofSeconds(20))) {
            java.util.concurrent.CountDownLatch seen = new java.util.concurrent.CountDownLatch(1);
            List<RankSnapshot.Stall> stalls = new ArrayList<>();
            Thread poller = Thread.ofPlatform().start(() -> {
                long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
                while (System.nanoTime() < deadline) {
                    Optional<RankSnapshot> zero = read(store, 0);
                    if (zero.isPresent() && !zero.get().stalls().isEmpty()) {
                        stalls.addAll(zero.get().stalls());
                        seen.countDown();
                        return;
                    }
                    try {
                        Thread.sleep(50);
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            });
            List<Object> results = Ranks.fromEnvironment(3, r -> Map.of("KOLO_RANK", Integer.toString(r),
                    "KOLO_SIZE", "3", "KOLO_RENDEZVOUS_ADDR", "127.0.0.1",
                    "KOLO_RENDEZVOUS_PORT", Integer.toString(service.address().getPort()),
                    "KOLO_RENDEZVOUS_SERVER", "launcher", "KOLO_SECRET", secret.toHex(),
                    "KOLO_START_TIMEOUT_SECONDS", "30", "KOLO_TRANSPORT", "tcp",
                    "KOLO_VIEW", "1", "KOLO_VIEW_INTERVAL_MS", "100"), c -> {
                if (c.rank() == 2 && !seen.await(30, java.util.concurrent.TimeUnit.SECONDS)) {
                    throw new AssertionError("rank 0 never published the stall");
                }
                c.allreduce("late", Tensor.of(new float[]{1}), ReduceOp.SUM);
                return null;
            });
            poller.join();
            for (Object r : results) {
                assertNull(r, "every rank finished");
            }
            assertEquals(1, stalls.size(), stalls.toString());
            assertEquals("late", stalls.getFirst().op());
            assertArrayEquals(new int[]{2}, stalls.getFirst().missingRanks());
            assertTrue(stalls.getFirst().seconds() >= 1, stalls.getFirst().seconds() + " s");
            assertEquals(List.of(), read(store, 0).orElseThrow().stalls(), "no stall once rank 2 submitted");
        }
    }

    /**
     * Ops in flight together count once: with 16 allreduces submitted at once and waiting for a late rank 2, the time
     * in collectives a rank publishes is at most its wall time, not the ops' spans summed (16 times as much).
     */
    @Test
    void overlappingOpsCountOnceInTheTimeInCollectives() throws Exception {
        JobSecret secret = JobSecret.generate();
        try (RendezvousService service = RendezvousService.start(InetAddress.getLoopbackAddress(), 0, secret);
             RendezvousClient store = RendezvousClient.connect(service.address(), secret, Duration.ofSeconds(20))) {
            long[] wallNanos = new long[3];
            List<Object> results = Ranks.fromEnvironment(3, r -> Map.of("KOLO_RANK", Integer.toString(r),
                    "KOLO_SIZE", "3", "KOLO_RENDEZVOUS_ADDR", "127.0.0.1",
                    "KOLO_RENDEZVOUS_PORT", Integer.toString(service.address().getPort()),
                    "KOLO_RENDEZVOUS_SERVER", "launcher", "KOLO_SECRET", secret.toHex(),
                    "KOLO_START_TIMEOUT_SECONDS", "30", "KOLO_TRANSPORT", "tcp",
                    "KOLO_VIEW", "1", "KOLO_VIEW_INTERVAL_MS", "100"), c -> {
                c.allreduce(new float[]{1}, ReduceOp.SUM);
                long start = System.nanoTime();
                for (int step = 0; step < 3; step++) {
                    if (c.rank() == 2) {
                        Thread.sleep(200);
                    }
                    List<Handle<Tensor>> handles = new ArrayList<>();
                    for (int i = 0; i < 16; i++) {
                        handles.add(c.allreduceAsync("g" + i, Tensor.of(new float[]{i}), ReduceOp.SUM));
                    }
                    handles.forEach(Handle::await);
                }
                wallNanos[c.rank()] = System.nanoTime() - start;
                return null;
            });
            for (Object r : results) {
                assertNull(r, "every rank finished");
            }
            for (int r = 0; r < 2; r++) {
                RankSnapshot s = read(store, r).orElseThrow();
                assertEquals(1 + 3 * 16, s.ops());
                // The first op's own span counts too; it is short next to the three 200 ms waits.
                assertTrue(s.collectiveNanos() < wallNanos[r] + Duration.ofMillis(150).toNanos(),
                        "rank " + r + ": " + s.collectiveNanos() / 1e6 + " ms in collectives in "
                                + wallNanos[r] / 1e6 + " ms");
                assertTrue(s.collectiveNanos() >= Duration.ofMillis(3 * 150).toNanos(),
                        "rank " + r + " waited for rank 2 in collectives: " + s.collectiveNanos() / 1e6 + " ms");
            }
        }
    }

    /**
     * Under mpirun rank 0 serves the store, which goes when rank 0 leaves: the other ranks' last snapshots may find it
     * gone. That says nothing on stderr, let alone a stack trace.
     */
    @Test
    void aStoreGoneAtTheEndPrintsNothing() throws Exception {
        int port = Ranks.freePort();
        String secret = JobSecret.generate().toHex();
        java.io.PrintStream err = System.err;
        java.io.ByteArrayOutputStream captured = new java.io.ByteArrayOutputStream();
        System.setErr(new java.io.PrintStream(captured, true, java.nio.charset.StandardCharsets.UTF_8));
        List<Object> results;
        try {
            results = Ranks.fromEnvironment(3, r -> Map.of("KOLO_RANK", Integer.toString(r), "KOLO_SIZE", "3",
                    "KOLO_RENDEZVOUS_ADDR", "127.0.0.1", "KOLO_RENDEZVOUS_PORT", Integer.toString(port),
                    "KOLO_SECRET", secret, "KOLO_START_TIMEOUT_SECONDS", "30", "KOLO_TRANSPORT", "tcp",
                    "KOLO_VIEW", "1", "KOLO_VIEW_INTERVAL_MS", "10"), c -> {
                for (int i = 0; i < 20; i++) {
                    c.allreduce(new float[]{1}, ReduceOp.SUM);
                    c.report("step", i);
                }
                if (c.rank() != 0) {
                    // Rank 0, and the store with it, leaves first.
                    Thread.sleep(300);
                }
                return null;
            });
        } finally {
            System.setErr(err);
        }
        for (Object r : results) {
            assertNull(r, "every rank finished");
        }
        String said = captured.toString(java.nio.charset.StandardCharsets.UTF_8);
        assertFalse(said.contains("Exception") || said.contains("\tat "), said);
    }

    private static Optional<RankSnapshot> read(RendezvousClient store, int rank) {
        return store.tryGet(StoreKeys.view(rank)).map(RankSnapshot::fromStoreValue);
    }
}
