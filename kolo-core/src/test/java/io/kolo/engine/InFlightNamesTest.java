package io.kolo.engine;

import org.junit.jupiter.api.Test;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

class InFlightNamesTest {

    @Test
    void aNameIsRefusedWhileInFlightAndFreeAfterwards() {
        InFlightNames names = new InFlightNames(8);
        InFlightNames.Slot slot = names.claim("grad.w");
        assertNotNull(slot);
        assertNull(names.claim("grad.w"), "a second op of the same name while the first is in flight");
        assertNotNull(names.claim("grad.b"), "other names are independent");
        names.release(slot, true);
        assertSame(slot, names.claim("grad.w"), "a repeated name reuses its slot");
    }

    @Test
    void generatedNamesAndNamesBeyondTheLimitDoNotStay() {
        InFlightNames names = new InFlightNames(2);
        InFlightNames.Slot once = names.claim("allreduce.noname.1");
        names.release(once, false);
        assertEquals(0, names.slots());
        for (int i = 0; i < 10; i++) {
            String name = "step." + i;
            names.release(names.claim(name), true);
        }
        assertEquals(2, names.slots(), "kept up to the limit, dropped past it");
        InFlightNames.Slot again = names.claim("step.9");
        assertNotNull(again, "a dropped name can be claimed again");
    }

    @Test
    void racingClaimsOfOneNameNeverBothWin() throws Exception {
        // A name is claimed, released and dropped (the map is full) over and over while other threads try to claim
        // it: at no moment may two threads hold it.
        InFlightNames names = new InFlightNames(0);
        AtomicInteger holders = new AtomicInteger();
        AtomicReference<String> broken = new AtomicReference<>();
        int threads = 4;
        CountDownLatch done = new CountDownLatch(threads);
        for (int t = 0; t < threads; t++) {
            Thread.ofPlatform().start(() -> {
                try {
                    for (int i = 0; i < 50_000; i++) {
                        InFlightNames.Slot s = names.claim("x");
                        if (s == null) {
                            continue;
                        }
                        if (holders.incrementAndGet() != 1) {
                            broken.compareAndSet(null, "two holders of 'x' at once");
                        }
                        holders.decrementAndGet();
                        names.release(s, true);
                    }
                } finally {
                    done.countDown();
                }
            });
        }
        done.await();
        assertNull(broken.get());
        assertEquals(0, names.slots());
    }
}
