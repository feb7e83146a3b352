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

    @Test
    void rejectsNulls() {
        try (InMemoryStore s = new InMemoryStore()) {
            assertThrows(NullPointerException.class, () -> s.put(null, "v"));
            assertThrows(NullPointerException.class, () -> s.put("k", null));
        }
    }
}
