package io.kolo;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A handle without an engine to drive: its waiters sleep until another thread ends the op, however many they are. */
class HandleTest {

    @Test
    void everySleepingWaiterWakesWhenAnotherThreadCompletes() throws Exception {
        for (int round = 0; round < 200; round++) {
            Handle<String> h = new Handle<>("op", Duration.ofSeconds(30));
            List<CompletableFuture<String>> waiters = new ArrayList<>();
            for (int w = 0; w < 3; w++) {
                waiters.add(CompletableFuture.supplyAsync(h::await, r -> Thread.ofPlatform().start(r)));
            }
            // Sometimes before the waiters sleep, sometimes after: the end must reach them either way.
            if (round % 2 == 1) {
                Thread.sleep(1);
            }
            String value = "done " + round;
            Thread.ofPlatform().start(() -> h.complete(value)).join();
            for (CompletableFuture<String> w : waiters) {
                assertSame(value, w.get(10, TimeUnit.SECONDS), "round " + round);
            }
            assertTrue(h.poll());
        }
    }

    /** "Wait forever" as java.time says it: it threw ArithmeticException (long overflow) before the op could run. */
    @Test
    void aTimeoutBeyondALongOfNanosecondsWaitsForTheResult() {
        List<Float> sums = Ranks.run(2, comm -> comm.allreduceAsync("x", Tensor.of(new float[]{1}), ReduceOp.SUM)
                .await(java.time.temporal.ChronoUnit.FOREVER.getDuration()).floats()[0]);
        assertEquals(List.of(2f, 2f), sums);
        Handle<String> h = new Handle<>("op", Duration.ofSeconds(30));
        h.complete("done");
        assertEquals("done", h.await(Duration.ofSeconds(Long.MAX_VALUE)));
    }

    @Test
    void aFailureReachesASleepingWaiter() throws Exception {
        Handle<String> h = new Handle<>("op", Duration.ofSeconds(30));
        CompletableFuture<Throwable> waiter = CompletableFuture.supplyAsync(() -> {
            try {
                h.await();
                return null;
            } catch (RuntimeException e) {
                return e;
            }
        }, r -> Thread.ofPlatform().start(r));
        Thread.sleep(20);
        KoloException cause = new KoloException("rank 1 failed");
        h.fail(cause);
        assertSame(cause, waiter.get(10, TimeUnit.SECONDS));
    }

    /** It waited not at all and then said "timed out after -1 s", as if the op were late. */
    @Test
    void aNegativeTimeoutIsRefusedNamingIt() {
        Handle<String> h = new Handle<>("grad.w", Duration.ofSeconds(30));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> h.await(Duration.ofSeconds(-1)));
        assertEquals("await timeout PT-1S is negative: pass Duration.ZERO to take the result only if it is done, or"
                + " a positive timeout", e.getMessage());
        h.complete("done");
        assertThrows(IllegalArgumentException.class, () -> h.await(Duration.ofMillis(-5)), "done or not");
        assertEquals("done", h.await(Duration.ZERO));
    }

    @Test
    void aWaitThatOutlastsItsTimeoutSaysWhatTheOpWaitsFor() {
        Handle<String> h = new Handle<>("grad.w", Duration.ofSeconds(30));
        h.explainedBy(name -> "rank 3 had not submitted " + name);
        assertFalse(h.poll());
        KoloTimeoutException e = assertThrows(KoloTimeoutException.class, () -> h.await(Duration.ofMillis(50)));
        assertTrue(e.getMessage().contains("waiting for 'grad.w': rank 3 had not submitted grad.w"), e.getMessage());
        // Its own timeout, not KOLO_TIMEOUT_SECONDS, is what to raise; it said "raise KOLO_TIMEOUT_SECONDS" after "0 s".
        assertTrue(e.getMessage().startsWith("timed out after 50 ms waiting for")
                && e.getMessage().endsWith("; pass await() a longer timeout if ranks legitimately wait this long"),
                e.getMessage());
        h.complete("late");
        assertEquals("late", h.await(Duration.ofMillis(1)), "a later wait sees the op done");
    }
}
