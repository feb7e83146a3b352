package io.kolo;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * An await drives the engine's first cycle from its op's submission time (no clock reading for an op that cycle ends),
 * but its timeout still counts from the await: an op submitted long before is waited for the whole timeout.
 */
class LateAwaitTest {

    @Test
    void anAwaitLongAfterTheSubmissionStillWaitsItsWholeTimeout() {
        CountDownLatch rankZeroTimedOut = new CountDownLatch(1);
        List<Long> waited = Ranks.run(2, comm -> {
            float[] data = {comm.rank() + 1};
            if (comm.rank() == 1) {
                // Submit only once rank 0 has given up waiting, so that its op was still pending then.
                assertTrue(rankZeroTimedOut.await(30, TimeUnit.SECONDS));
                comm.allreduceAsync("late.await", Tensor.of(data), ReduceOp.SUM).await();
                assertArrayEquals(new float[]{3}, data);
                return 0L;
            }
            Handle<Tensor> h = comm.allreduceAsync("late.await", Tensor.of(data), ReduceOp.SUM);
            Thread.sleep(600);
            long start = System.nanoTime();
            assertThrows(KoloTimeoutException.class, () -> h.await(Duration.ofMillis(400)));
            long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            rankZeroTimedOut.countDown();
            h.await();
            assertArrayEquals(new float[]{3}, data);
            return ms;
        });
        // Counted from the submission, the deadline had passed before the await began.
        assertTrue(waited.getFirst() >= 390, "rank 0 waited " + waited.getFirst() + " ms of its 400 ms timeout");
        assertEquals(0L, waited.get(1));
    }
}
