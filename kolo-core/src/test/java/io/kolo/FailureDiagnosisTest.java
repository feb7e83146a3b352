package io.kolo;

import io.kolo.bootstrap.InMemoryStore;
import io.kolo.transport.LocalTransport;
import io.kolo.transport.PeerFailedException;
import io.kolo.transport.Transport;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

/** Which rank a failing rank names when the records arrive in an unlucky order. */
class FailureDiagnosisTest {

    @Test
    void anAbortingPeerIsAMessengerSoTheRecordThatFollowsIsNamed() throws Exception {
        InMemoryStore store = new InMemoryStore();
        List<Transport> ranks = LocalTransport.group(3, Duration.ofSeconds(5));
        ScheduledExecutorService later = Executors.newSingleThreadScheduledExecutor();
        try {
            // Rank 0 saw rank 1 die and aborted; it records that a moment after rank 2 already saw its abort.
            later.schedule(() -> store.putIfAbsent("failure", "1\tlost rank 1: it died"), 200, TimeUnit.MILLISECONDS);
            RuntimeException seen = new FailureDiagnosis(2, store, ranks.get(2)).explain(
                    new PeerFailedException(0, "lost rank 0 over shared memory: rank 0 aborted", null, true));
            RankFailedException named = assertInstanceOf(RankFailedException.class, seen);
            assertEquals(1, named.failedRank(), named.getMessage());
            assertEquals("1\tlost rank 1: it died", store.tryGet("failure").orElseThrow(),
                    "the messenger's abort must not be recorded as the first failure");
        } finally {
            later.shutdownNow();
            ranks.forEach(Transport::close);
        }
    }

    @Test
    void theLaunchersRecordOfTheFirstExitReplacesAMessengerRecordedFirst() throws Exception {
        InMemoryStore store = new InMemoryStore();
        List<Transport> ranks = LocalTransport.group(4, Duration.ofSeconds(5));
        ScheduledExecutorService later = Executors.newSingleThreadScheduledExecutor();
        try {
            // Over TCP an abort looks like an exit: rank 3 recorded rank 0, the rank that closed on seeing rank 1 go.
            store.putIfAbsent("failure", "0\tlost connection to rank 0 (it exited, crashed or aborted)");
            later.schedule(() -> {
                store.put("failed/1", "rank 1 exited with code 3");
                store.put("failure", "1\trank 1 exited with code 3");
            }, 200, TimeUnit.MILLISECONDS);
            RuntimeException seen = new FailureDiagnosis(3, store, ranks.get(3)).explain(
                    new PeerFailedException(0, "lost connection to rank 0 (it exited, crashed or aborted)", null));
            RankFailedException named = assertInstanceOf(RankFailedException.class, seen);
            assertEquals(1, named.failedRank(), named.getMessage());
            assertEquals("rank 1 exited with code 3", named.getMessage());
        } finally {
            later.shutdownNow();
            ranks.forEach(Transport::close);
        }
    }

    @Test
    void aSurvivorNamedByAPeerThatSawItCloseNamesTheRankItSawFailAndPutsTheRecordRight() {
        InMemoryStore store = new InMemoryStore();
        List<Transport> ranks = LocalTransport.group(3, Duration.ofSeconds(5));
        try {
            // Over TCP: rank 1 saw rank 2 exit and closed; rank 0 saw rank 1's connection close first and recorded it.
            store.putIfAbsent("failure", "1\tlost connection to rank 1 (it exited, crashed or aborted)");
            RuntimeException seen = new FailureDiagnosis(1, store, ranks.get(1)).explain(
                    new PeerFailedException(2, "lost connection to rank 2 (it exited, crashed or aborted)", null));
            RankFailedException named = assertInstanceOf(RankFailedException.class, seen);
            assertEquals(2, named.failedRank(), named.getMessage());
            assertEquals("2\tlost connection to rank 2 (it exited, crashed or aborted)",
                    store.tryGet("failure").orElseThrow(), "rank 0, still waiting for the cause, reads this record");
        } finally {
            ranks.forEach(Transport::close);
        }
    }

    @Test
    void aRankFailingOnItsOwnRecordsItselfSoItsPeersNameIt() {
        InMemoryStore store = new InMemoryStore();
        List<Transport> ranks = LocalTransport.group(2, Duration.ofSeconds(5));
        try {
            RuntimeException own = new KoloTimeoutException("rank 0 timed out after 30 s waiting for rank 1");
            assertEquals(own, new FailureDiagnosis(0, store, ranks.get(0)).explain(own));
            RuntimeException seen = new FailureDiagnosis(1, store, ranks.get(1)).explain(
                    new PeerFailedException(0, "rank 0 aborted: " + own.getMessage(), own, true));
            RankFailedException named = assertInstanceOf(RankFailedException.class, seen);
            assertEquals(0, named.failedRank());
            assertEquals("rank 0 failed: rank 0 timed out after 30 s waiting for rank 1", named.getMessage());
        } finally {
            ranks.forEach(Transport::close);
        }
    }

    @Test
    void lastWordsReadBeforeRankZerosStoreWentAwayStillNameTheCause() {
        // Under mpirun or srun the store lives in rank 0, which reports the same failure and exits while this rank
        // still waits for a launcher's record that never comes.
        InMemoryStore words = new InMemoryStore();
        words.put("cause/1", "called System.exit at Worker.main(Worker.java:9)");
        java.util.concurrent.atomic.AtomicInteger calls = new java.util.concurrent.atomic.AtomicInteger();
        io.kolo.bootstrap.KeyValueStore dying = new io.kolo.bootstrap.KeyValueStore() {
            private void maybeGone() {
                if (calls.incrementAndGet() > 4) {
                    throw new KoloException("the rendezvous server at 127.0.0.1:1 is gone (EOF)");
                }
            }

            @Override
            public void put(String key, String value) {
                maybeGone();
                words.put(key, value);
            }

            @Override
            public boolean putIfAbsent(String key, String value) {
                maybeGone();
                return words.putIfAbsent(key, value);
            }

            @Override
            public java.util.Optional<String> tryGet(String key) {
                maybeGone();
                return words.tryGet(key);
            }

            @Override
            public String get(String key, Duration timeout) {
                maybeGone();
                return words.get(key, timeout);
            }

            @Override
            public void close() {
            }
        };
        List<Transport> ranks = LocalTransport.group(3, Duration.ofSeconds(5));
        try {
            RuntimeException seen = new FailureDiagnosis(2, dying, ranks.get(2)).explain(new PeerFailedException(1,
                    "lost rank 1 over shared memory: rank 1 (pid 7) died: it exited, crashed or was killed", null, false));
            RankFailedException named = assertInstanceOf(RankFailedException.class, seen);
            assertEquals(1, named.failedRank(), named.getMessage());
            assertEquals("rank 1 failed: called System.exit at Worker.main(Worker.java:9)", named.getMessage());
        } finally {
            ranks.forEach(Transport::close);
        }
    }
}
