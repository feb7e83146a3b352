package io.kolo.engine;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class CycleRunnerTest {

    /**
     * A caller whose op another thread's cycles run sleeps until a cycle completes ops: it neither wakes on a timer
     * to look (with a thousand ranks on two cores those looks took a third of the CPU) nor waits for the lock to be
     * given up. The holder's first cycle takes half a second and completes the waiter's op; its second cycle waits for
     * the waiter to have returned, still holding the lock.
     */
    @Test
    void aWaiterIsWokenByTheCycleThatCompletesItsOpNotByATimer() throws Exception {
        AtomicBoolean waiterOpDone = new AtomicBoolean();
        AtomicBoolean holderOpDone = new AtomicBoolean();
        CountDownLatch waiterWaiting = new CountDownLatch(1);
        CountDownLatch waiterReturned = new CountDownLatch(1);
        AtomicBoolean returnedWhileLockHeld = new AtomicBoolean();
        AtomicLong looks = new AtomicLong();
        FakeAgent agent = new FakeAgent() {
            int cycles;

            @Override
            public boolean cycle(long nowNanos) {
                super.cycle(nowNanos);
                try {
                    if (cycles++ == 0) {
                        waiterWaiting.await(10, TimeUnit.SECONDS);
                        Thread.sleep(500);
                        waiterOpDone.set(true);
                        completed.incrementAndGet();
                    } else {
                        returnedWhileLockHeld.set(waiterReturned.await(10, TimeUnit.SECONDS));
                        holderOpDone.set(true);
                        completed.incrementAndGet();
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                return false;
            }
        };
        CycleRunner runner = new CycleRunner("kolo-test-engine", Duration.ZERO, IdleStrategy.POLL_THEN_PARK, agent);
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Thread holder = Thread.ofPlatform().start(() -> {
            long now = System.nanoTime();
            runner.drive(holderOpDone::get, now, now + TimeUnit.SECONDS.toNanos(30));
        });
        assertTrue(agent.inCycle.await(10, TimeUnit.SECONDS), "the holder runs a cycle");
        Thread waiter = Thread.ofPlatform().start(() -> {
            try {
                long now = System.nanoTime();
                runner.drive(() -> {
                    looks.incrementAndGet();
                    waiterWaiting.countDown();
                    return waiterOpDone.get();
                }, now, now + TimeUnit.SECONDS.toNanos(30));
                waiterReturned.countDown();
            } catch (Throwable t) {
                failure.set(t);
            }
        });
        waiter.join(30_000);
        holder.join(30_000);
        assertEquals(null, failure.get());
        assertTrue(waiterOpDone.get() && holderOpDone.get(), "both ops ran");
        assertTrue(returnedWhileLockHeld.get(),
                "the waiter returned only when the holder gave the lock up, not when its op completed");
        // Its first look, one per wake-up of the 20 ms safety bound, and the look after the completing cycle:
        // a waiter on a 20 us timer looked thousands of times in the half second.
        assertTrue(looks.get() < 100, "the waiter looked at its op " + looks.get() + " times in half a second");
    }

    /** A waiter sleeping while another thread runs a cycle takes the cycles up itself once the lock is given up. */
    @Test
    void aWaiterTakesTheCyclesUpWhenTheHolderLetsGo() throws Exception {
        AtomicBoolean holderOpDone = new AtomicBoolean();
        AtomicBoolean waiterOpDone = new AtomicBoolean();
        CountDownLatch waiterWaiting = new CountDownLatch(1);
        AtomicReference<Thread> secondCycleOn = new AtomicReference<>();
        FakeAgent agent = new FakeAgent() {
            int cycles;

            @Override
            public boolean cycle(long nowNanos) {
                super.cycle(nowNanos);
                if (cycles++ == 0) {
                    try {
                        waiterWaiting.await(10, TimeUnit.SECONDS);
                        Thread.sleep(100);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                    holderOpDone.set(true);
                } else {
                    secondCycleOn.set(Thread.currentThread());
                    waiterOpDone.set(true);
                }
                completed.incrementAndGet();
                return false;
            }
        };
        CycleRunner runner = new CycleRunner("kolo-test-engine", Duration.ZERO, IdleStrategy.POLL_THEN_PARK, agent);
        Thread holder = Thread.ofPlatform().start(() -> {
            long now = System.nanoTime();
            runner.drive(holderOpDone::get, now, now + TimeUnit.SECONDS.toNanos(30));
        });
        assertTrue(agent.inCycle.await(10, TimeUnit.SECONDS), "the holder runs a cycle");
        Thread waiter = Thread.ofPlatform().start(() -> {
            long now = System.nanoTime();
            runner.drive(() -> {
                waiterWaiting.countDown();
                return waiterOpDone.get();
            }, now, now + TimeUnit.SECONDS.toNanos(30));
        });
        waiter.join(30_000);
        holder.join(30_000);
        assertTrue(waiterOpDone.get(), "the waiter's op ran");
        assertEquals(waiter, secondCycleOn.get(), "the waiter ran the cycle that did its op");
    }

    private static class FakeAgent implements CycleAgent {
        final AtomicLong completed = new AtomicLong();
        final CountDownLatch inCycle = new CountDownLatch(1);
        volatile long start;

        @Override
        public boolean cycle(long nowNanos) {
            start = nowNanos;
            inCycle.countDown();
            return false;
        }

        @Override
        public boolean hasWork() {
            return false;
        }

        @Override
        public boolean queueEmpty() {
            return true;
        }

        @Override
        public long lastDrainNanos() {
            return 0;
        }

        @Override
        public long cycleStartNanos() {
            return start;
        }

        @Override
        public long completedOps() {
            return completed.get();
        }

        @Override
        public void close() {
        }
    }
}
