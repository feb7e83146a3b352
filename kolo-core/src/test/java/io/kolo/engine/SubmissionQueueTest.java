package io.kolo.engine;

import io.kolo.DataType;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

class SubmissionQueueTest {

    private static Op op(String name) {
        return Op.of(OpKind.ALLREDUCE, name, DataType.FLOAT32, new long[]{1}, MemorySegment.ofArray(new float[1]));
    }

    private static List<String> names(Op oldest) {
        List<String> out = new ArrayList<>();
        for (Op op = oldest; op != null; op = op.nextSubmitted) {
            out.add(op.name());
        }
        return out;
    }

    @Test
    void takesEverythingOldestFirst() {
        SubmissionQueue q = new SubmissionQueue();
        assertTrue(q.isEmpty());
        assertNull(q.takeAll());
        q.add(op("a"));
        q.add(op("b"));
        q.add(op("c"));
        assertFalse(q.isEmpty());
        assertEquals(List.of("a", "b", "c"), names(q.takeAll()));
        assertTrue(q.isEmpty());
        q.add(op("d"));
        assertEquals(List.of("d"), names(q.takeAll()));
    }

    @Test
    void concurrentAddsLoseNothingAndKeepEachThreadsOrder() throws Exception {
        SubmissionQueue q = new SubmissionQueue();
        int threads = 4;
        int each = 20_000;
        CountDownLatch start = new CountDownLatch(1);
        CountDownLatch done = new CountDownLatch(threads);
        for (int t = 0; t < threads; t++) {
            int id = t;
            Thread.ofPlatform().start(() -> {
                try {
                    start.await();
                    for (int i = 0; i < each; i++) {
                        q.add(op(id + ":" + i));
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                } finally {
                    done.countDown();
                }
            });
        }
        start.countDown();
        List<String> taken = new ArrayList<>();
        while (done.getCount() > 0 || !q.isEmpty()) {
            taken.addAll(names(q.takeAll()));
        }
        assertEquals(threads * each, taken.size());
        assertEquals(threads * each, new HashSet<>(taken).size());
        int[] last = new int[threads];
        java.util.Arrays.fill(last, -1);
        for (String n : taken) {
            String[] p = n.split(":");
            int t = Integer.parseInt(p[0]);
            int i = Integer.parseInt(p[1]);
            assertEquals(last[t] + 1, i, "thread " + t + "'s ops out of order");
            last[t] = i;
        }
        Set<Integer> seen = new HashSet<>();
        for (int t = 0; t < threads; t++) {
            seen.add(last[t]);
        }
        assertEquals(Set.of(each - 1), seen);
    }
}
