package io.kolo.engine;

import io.kolo.KoloException;
import io.kolo.RankFailedException;
import org.junit.jupiter.api.Test;

import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What ops fail with once a set ended without a failure of its own. An op submitted while the set closed reached the
 * queue after the close's look at it, and failed with the plain "another rank shut down" although the job had recorded
 * which rank failed and why (ElasticRunTest: the elastic loop then took it for this rank's own failure and exited).
 */
class SetEndingTest {
    /** An explainer that names rank 1 as the failed rank, counting how often it is asked. */
    private static final class NamesRankOne implements FailureExplainer {
        final AtomicInteger asked = new AtomicInteger();

        @Override
        public RuntimeException explain(RuntimeException failure) {
            return failure;
        }

        @Override
        public RuntimeException explainLeaving(RuntimeException plain) {
            asked.incrementAndGet();
            return new RankFailedException(1, "rank 1 failed: IllegalStateException: boom", plain);
        }
    }

    @Test
    void aQueuedOpOfASetEndedByAnotherRanksShutdownNamesThatRank() {
        NamesRankOne explainer = new NamesRankOne();
        SetEnding ending = new SetEnding(0, explainer);
        ending.terminated();
        RuntimeException f = ending.forQueued();
        RankFailedException named = assertInstanceOf(RankFailedException.class, f);
        assertEquals(1, named.failedRank());
        // Later ops and refusals use the same answer without asking again.
        assertSame(f, ending.forQueued());
        assertTrue(ending.failure() instanceof RankFailedException);
        assertEquals(1, explainer.asked.get());
    }

    @Test
    void aShutdownHereOrARemovalIsNotBlamedOnAnotherRank() {
        NamesRankOne explainer = new NamesRankOne();
        SetEnding here = new SetEnding(0, explainer);
        here.requestShutdown();
        here.terminated();
        KoloException own = assertInstanceOf(KoloException.class, here.forQueued());
        assertTrue(own.getMessage().startsWith("Kolo was shut down on this rank"), own.getMessage());

        SetEnding removed = new SetEnding(0, explainer);
        removed.removed("process set 3 was removed");
        removed.terminated();
        assertEquals("process set 3 was removed", removed.forQueued().getMessage());
        assertEquals(0, explainer.asked.get());
    }

    @Test
    void aFailedSetsQueuedOpsFailWithItsFailure() {
        NamesRankOne explainer = new NamesRankOne();
        SetEnding ending = new SetEnding(0, explainer);
        KoloException failure = new KoloException("rank 2 failed: timed out");
        ending.failed(failure);
        ending.terminated();
        assertSame(failure, ending.forQueued());
        assertEquals(0, explainer.asked.get());
    }
}
