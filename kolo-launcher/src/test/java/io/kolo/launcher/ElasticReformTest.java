package io.kolo.launcher;

import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Elastic jobs over TCP whose next job loses a replacement worker while it forms: the replacement dies (halts, as a
 * crash) as soon as its data-plane address is in the store, before its peers' connections reach it. Its peers, waiting
 * for its connection or retrying theirs to it, must see that the launcher has moved on to the next job and go there
 * within seconds. Before, they waited out the start timeout (60 s here), and a worker started into that job gave up.
 */
@Timeout(150)
class ElasticReformTest {

    /**
     * @param killed the workers SIGKILLed together at step 10 (one replacement each)
     * @param done   who finishes, as "worker W done at 60 as rank R of 3", in rank order
     */
    @ParameterizedTest(name = "{0} killed, replacement w3 dies after publishing its address")
    @CsvSource(delimiter = ';', value = {
            // w3 is rank 2: w0 and w2 wait for its connection.
            "w1; w0 w2 w4",
            // w3 is rank 1, w4 rank 2: w4 retries its connection to w3, w0 waits for w3's.
            "w1 w2; w0 w4 w5"})
    void peersOfAReplacementThatDiesAfterPublishingItsAddressGoToTheNextJobInSeconds(String killed, String done,
                                                                                     @TempDir Path dir)
            throws Exception {
        var job = ElasticRunTest.startWithStartTimeout(dir, 60, 60, 30, "-np", "3", "--min-np", "2", "-H",
                "localhost:3", "--reset-limit", "5", "-x", "KOLO_TRANSPORT=tcp",
                "-x", "COUNTER_DIE_AFTER_ADDRESS_AS_WORKER=w3");
        ElasticRunTest.awaitCommit(job, dir, "w1", 10);
        for (String w : killed.split(" ")) {
            ElasticRunTest.kill(dir, w);
        }
        long killedAt = System.nanoTime();
        LauncherProcessTest.Result r = ElasticRunTest.finish(job, dir);
        long seconds = (System.nanoTime() - killedAt) / 1_000_000_000L;
        assertEquals(0, r.code(), r.out() + r.err());
        assertTrue(r.err().lines().anyMatch(l -> l.startsWith("kolo: reset 2 of at most 5: rank ")
                && l.contains(" on host localhost exited with code 5")), r.err());
        String[] workers = done.split(" ");
        List<String> expected = List.of(0, 1, 2).stream()
                .map(rank -> "worker " + workers[rank] + " done at 60 as rank " + rank + " of 3").toList();
        assertEquals(expected, ElasticRunTest.finished(r), r.err());
        assertFalse(r.err().contains("timed out"), r.err());
        assertTrue(seconds < 30, "the job took " + seconds + " s after the kill (the start timeout is 60 s):\n" + r.err());
        ElasticRunTest.assertCommitsNeverGoBack(dir);
        ElasticRunTest.assertNothingLeft(dir);
    }
}
