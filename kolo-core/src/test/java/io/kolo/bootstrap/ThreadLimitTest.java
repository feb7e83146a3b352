package io.kolo.bootstrap;

import io.kolo.KoloException;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ThreadLimitTest {
    @Test
    void aThreadThatCannotStartIsExplainedWithTheLimitsAndWhatEachRankNeeds() {
        OutOfMemoryError jvm = new OutOfMemoryError("unable to create native thread: possibly out of memory or process/"
                + "resource limits reached");
        Thread cannotStart = new Thread(() -> { }) {
            @Override
            public void run() {
            }

            // What Thread.start throws where the process may start no more threads.
            @Override
            public synchronized void start() {
                throw jvm;
            }
        };
        KoloException e = assertThrows(KoloException.class, () -> ThreadLimit.start(cannotStart, "rank 3's engine"));
        assertSame(jvm, e.getCause());
        String m = e.getMessage();
        assertTrue(m.startsWith("could not start rank 3's engine thread (unable to create native thread"), m);
        assertTrue(m.matches(".*this process runs \\d+ threads against a limit of (\\d+|unlimited) processes per user"
                + " \\(ulimit -u\\) and \\d+ threads on this host \\(kernel.threads-max\\).*"), m);
        assertTrue(m.contains("each rank needs about " + ThreadLimit.PER_RANK + " threads"), m);
        assertEquals(1, m.lines().count(), m);
    }

    @Test
    void aThreadThatStartsIsReturnedRunning() throws Exception {
        Thread t = ThreadLimit.start(Thread.ofPlatform().daemon(), () -> { }, "a test's");
        t.join(10_000);
        assertTrue(!t.isAlive());
    }
}
