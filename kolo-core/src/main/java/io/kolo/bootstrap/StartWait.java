package io.kolo.bootstrap;

import io.kolo.KoloException;
import io.kolo.KoloTimeoutException;

import java.time.Duration;

/**
 * Waiting at start for something another rank publishes in the rendezvous store, and the one message every such wait
 * gives when it fails: which rank it waited for and what for, the likely reasons, and the setting to raise.
 */
public final class StartWait {
    private StartWait() {
    }

    /**
     * The value of {@code key}, published by {@code peer} (or by one of {@code peers}, named in {@code whom}).
     *
     * @param what what the peer was to do: "to publish its host"
     * @throws KoloTimeoutException when the start timeout passed first
     * @throws KoloException        when the store went away meanwhile (its host, rank 0, usually timed out first)
     */
    public static String await(KeyValueStore store, String key, long deadlineNanos, int rank, String whom,
                               Duration startTimeout, String what) {
        try {
            return store.get(key, Duration.ofNanos(Math.max(1, deadlineNanos - System.nanoTime())));
        } catch (KoloTimeoutException e) {
            throw timedOut(rank, whom, startTimeout, what);
        } catch (GenerationReplacedException e) {
            throw e;   // the store is there; the job it waited in is over
        } catch (KoloException e) {
            throw storeGone(rank, whom, what, e);
        }
    }

    /** "rank 3 timed out after 60 s waiting for rank 1 to publish its host (...); raise KOLO_START_TIMEOUT_SECONDS ..." */
    public static KoloTimeoutException timedOut(int rank, String whom, Duration startTimeout, String what) {
        boolean one = !whom.startsWith("ranks ");
        return new KoloTimeoutException("rank " + rank + " timed out after " + Durations.describe(startTimeout)
                + " waiting for " + whom + " " + what + " (" + (one ? "it" : "they") + " did not start, failed during"
                + " startup, or cannot reach the rendezvous server); raise KOLO_START_TIMEOUT_SECONDS if "
                + (one ? "it legitimately starts" : "they legitimately start") + " this slowly");
    }

    /** The store vanished while this rank waited for {@code whom}: usually its host hit its own start timeout first. */
    public static KoloException storeGone(int rank, String whom, String what, KoloException cause) {
        return new KoloException("rank " + rank + " was waiting for " + whom + " " + what + " when the rendezvous"
                + " store went away (" + cause.getMessage() + "); " + whom + " did not start in time or failed during"
                + " startup; raise KOLO_START_TIMEOUT_SECONDS if it legitimately starts this slowly", cause);
    }
}
