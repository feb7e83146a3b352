package io.kolo.bootstrap;

import io.kolo.KoloTimeoutException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

@Timeout(value = 20, unit = TimeUnit.SECONDS)
class InMemoryStoreTest {

    @Test
    void putAndGet() {
        try (InMemoryStore s = new InMemoryStore()) {
            assertEquals(Optional.empty(), s.tryGet("a"));
            s.put("a", "1");
            assertEquals(Optional.of("1"), s.tryGet("a"));
            assertEquals("1", s.get("a", Duration.ZERO));
            s.put("a", "2");
            assertEquals("2", s.get("a", Duration.ofSeconds(1)));
        }
    }

    @Test
    void aCompleteTableIsReadOnceUntilOneOfItsKeysChanges() {
        try (InMemoryStore s = new InMemoryStore()) {
            s.put("addr/0", "x");
            s.put("addr/1", "y");
            java.util.List<String> first = s.getEach("addr/", 2, Duration.ZERO);
            assertEquals(java.util.List.of("x", "y"), first);
            assertTrue(first == s.getEach("addr/", 2, Duration.ZERO), "the same table read twice");
            assertTrue(first == s.tryGetEach("addr/", 2).orElseThrow(), "the same table read without waiting");
            s.put("addr/1", "y");   // the same value: nothing changed
            assertTrue(first == s.getEach("addr/", 2, Duration.ZERO));
            s.put("addr/10", "z");   // not one of the table's keys, though it shares the prefix
            assertEquals(java.util.List.of("x", "y"), s.getEach("addr/", 2, Duration.ZERO));
            s.put("addr/1", "w");
            assertEquals(java.util.List.of("x", "w"), s.getEach("addr/", 2, Duration.ZERO));
            assertEquals(java.util.List.of("x", "w"), s.tryGetEach("addr/", 2).orElseThrow());
        }
    }

    @Test
    void putIfAbsentKeepsTheFirstValue() {
        try (InMemoryStore s = new InMemoryStore()) {
            assertTrue(s.putIfAbsent("failure", "1\tfirst"));
            assertFalse(s.putIfAbsent("failure", "2\tsecond"));
            assertEquals("1\tfirst", s.get("failure", Duration.ZERO));
        }
    }

    @Test
    void getWaitsForAPutFromAnotherThread() throws Exception {
        try (InMemoryStore s = new InMemoryStore()) {
            CompletableFuture<String> waiting = CompletableFuture.supplyAsync(() -> s.get("addr/3", Duration.ofSeconds(10)));
            Thread.sleep(100);
            assertFalse(waiting.isDone());
            s.put("addr/3", "127.0.0.1:4000");
            assertEquals("127.0.0.1:4000", waiting.get(5, TimeUnit.SECONDS));
        }
    }

    @Test
    void getTimesOutNamingTheKey() {
        try (InMemoryStore s = new InMemoryStore()) {
            long start = System.nanoTime();
            KoloTimeoutException e = assertThrows(KoloTimeoutException.class,
                    () -> s.get("addr/7", Duration.ofMillis(200)));
            assertTrue(System.nanoTime() - start >= TimeUnit.MILLISECONDS.toNanos(150));
            assertTrue(e.getMessage().contains("addr/7"), e.getMessage());
        }
    }

    @Test
    void closeWakesWaitersAndRejectsPuts() throws Exception {
        InMemoryStore s = new InMemoryStore();
        CompletableFuture<String> waiting = CompletableFuture.supplyAsync(() -> s.get("k", Duration.ofSeconds(30)));
        Thread.sleep(100);
        s.close();
        Exception e = assertThrows(Exception.class, () -> waiting.get(5, TimeUnit.SECONDS));
        assertTrue(e.getCause() instanceof IllegalStateException, String.valueOf(e.getCause()));
        assertThrows(IllegalStateException.class, () -> s.put("k", "v"));
        s.close();
    }

    /**
     * A put wakes only the requests waiting for its key: many waiters of one key all get it, a table read whose keys
     * come last-first still returns when the first key it lacks comes, and waiters of other keys keep waiting.
     */
    @Test
    void eachPutAnswersTheRequestsWaitingForItsKeyAndOnlyThose() throws Exception {
        try (InMemoryStore s = new InMemoryStore();
             var threads = java.util.concurrent.Executors.newVirtualThreadPerTaskExecutor()) {
            java.util.List<CompletableFuture<String>> sameKey = new java.util.ArrayList<>();
            for (int i = 0; i < 8; i++) {
                sameKey.add(CompletableFuture.supplyAsync(() -> s.get("k", Duration.ofSeconds(10)), threads));
            }
            CompletableFuture<java.util.List<String>> table =
                    CompletableFuture.supplyAsync(() -> s.getEach("addr/", 3, Duration.ofSeconds(10)), threads);
            CompletableFuture<String> other =
                    CompletableFuture.supplyAsync(() -> s.get("other", Duration.ofSeconds(10)), threads);
            Thread.sleep(200);
            s.put("addr/2", "c");
            s.put("addr/1", "b");
            s.put("k", "v");
            for (CompletableFuture<String> f : sameKey) {
                assertEquals("v", f.get(5, TimeUnit.SECONDS));
            }
            Thread.sleep(100);
            assertFalse(table.isDone(), "the table read returned without addr/0");
            s.put("addr/0", "a");
            assertEquals(java.util.List.of("a", "b", "c"), table.get(5, TimeUnit.SECONDS));
            assertFalse(other.isDone());
            s.put("other", "o");
            assertEquals("o", other.get(5, TimeUnit.SECONDS));
        }
    }

    @Test
    void rejectsNulls() {
        try (InMemoryStore s = new InMemoryStore()) {
            assertThrows(NullPointerException.class, () -> s.put(null, "v"));
            assertThrows(NullPointerException.class, () -> s.put("k", null));
        }
    }

    /** A parked request (the network server's way of waiting) is called back once, when what it waits for is there. */
    @Test
    void parkedRequestsAreCalledBackOnceWhenTheirKeysArriveAndNeverOnceCancelled() {
        try (InMemoryStore s = new InMemoryStore()) {
            java.util.concurrent.atomic.AtomicInteger one = new java.util.concurrent.atomic.AtomicInteger();
            java.util.concurrent.atomic.AtomicInteger table = new java.util.concurrent.atomic.AtomicInteger();
            java.util.concurrent.atomic.AtomicInteger cancelled = new java.util.concurrent.atomic.AtomicInteger();
            s.whenPresent("k", one::incrementAndGet);
            s.whenEachPresent("addr/", 3, table::incrementAndGet);
            s.whenPresent("k", cancelled::incrementAndGet).cancel();
            s.whenEachPresent("addr/", 3, cancelled::incrementAndGet).cancel();
            s.put("addr/0", "a");
            s.put("addr/2", "c");
            assertEquals(0, table.get());
            s.put("addr/1", "b");
            assertEquals(1, table.get());
            s.put("k", "v");
            s.put("k", "w");
            assertEquals(1, one.get());
            assertEquals(0, cancelled.get());
            assertEquals(Optional.of(java.util.List.of("a", "b", "c")), s.tryGetEach("addr/", 3));
            // Present already: called back at once.
            s.whenPresent("k", one::incrementAndGet);
            assertEquals(2, one.get());
        }
    }

    @Test
    void closingCallsBackEveryParkedRequest() {
        InMemoryStore s = new InMemoryStore();
        java.util.concurrent.atomic.AtomicInteger woken = new java.util.concurrent.atomic.AtomicInteger();
        s.whenPresent("k", woken::incrementAndGet);
        s.whenEachPresent("addr/", 2, woken::incrementAndGet);
        s.close();
        assertEquals(2, woken.get());
        assertTrue(s.isClosed());
    }
}
