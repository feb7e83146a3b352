package io.kolo.bootstrap;

import io.kolo.KoloException;
import io.kolo.KoloTimeoutException;

import java.time.Duration;
import java.util.List;
import java.util.StringJoiner;

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

    /**
     * Every rank's value under {@code prefix} ({@code prefix + r} for each rank {@code r} of {@code size}), read in one
     * request; a timeout names every rank still missing.
     *
     * @param what what the ranks were to do: "to publish their hosts"
     */
    public static List<String> awaitEach(KeyValueStore store, String prefix, int size, long deadlineNanos, int rank,
                                         Duration startTimeout, String what) {
        try {
            return store.getEach(prefix, size, Duration.ofNanos(Math.max(1, deadlineNanos - System.nanoTime())));
        } catch (KoloTimeoutException e) {
            throw timedOut(rank, missing(store, prefix, size), startTimeout, what);
        } catch (GenerationReplacedException e) {
            throw e;   // the store is there; the job it waited in is over
        } catch (KoloException e) {
            throw storeGone(rank, "the other ranks", what, e);
        }
    }

    /** "rank 4" or "ranks 4, 7": the ranks without a value under {@code prefix} now (all, if the store is gone). */
    private static String missing(KeyValueStore store, String prefix, int size) {
        StringJoiner ranks = new StringJoiner(", ");
        int count = 0;
        for (int r = 0; r < size; r++) {
            boolean absent;
            try {
                absent = store.tryGet(prefix + r).isEmpty();
            } catch (KoloException storeGone) {
                absent = true;
            }
            if (absent) {
                ranks.add(String.valueOf(r));
                count++;
            }
        }
        return (count == 1 ? "rank " : "ranks ") + ranks;
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
