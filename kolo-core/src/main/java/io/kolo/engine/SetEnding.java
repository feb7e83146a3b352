package io.kolo.engine;

import io.kolo.KoloException;

/**
 * Why a set's ops fail once the set has ended with no failure of its own: its removal, this rank's shutdown, or
 * another rank's. A rank that shuts down under the others' ops has usually failed (programs shut down in a
 * {@code finally} block that an exception unwinds through), and a moment later the job records its failure: the
 * explainer is asked for it once per set, so that only the first op to find the set ended waits for it.
 */
final class SetEnding {
    private final FailureExplainer explainer;
    private volatile String removedBecause;
    private boolean asked;
    /** The failure of the rank whose shutdown ended the set, once known; guarded by this. */
    private RuntimeException failure;

    SetEnding(FailureExplainer explainer) {
        this.explainer = explainer;
    }

    /** The set was removed: what is left fails saying {@code why}. */
    void removed(String why) {
        removedBecause = why;
    }

    /** Why the set's ops fail now, given whether this rank asked for the shutdown; never waits. */
    synchronized RuntimeException known(boolean shutdownHere) {
        return failure != null && !shutdownHere ? failure : new KoloException(why(shutdownHere));
    }

    /**
     * As {@link #known}, but when another rank's shutdown ended the set (not this rank's, nor a removal), the first call
     * waits a moment for that rank's failure to be recorded: ops then fail naming it.
     */
    synchronized RuntimeException failure(boolean shutdownHere) {
        if (!asked && !shutdownHere && removedBecause == null) {
            asked = true;
            KoloException ended = new KoloException(why(false));
            RuntimeException explained = explainer.explainLeaving(ended);
            failure = explained == ended ? null : explained;
        }
        return known(shutdownHere);
    }

    /** What a collective started after the set ended fails with (see {@link #failure}). */
    RuntimeException refusal(boolean shutdownHere) {
        RuntimeException f = failure(shutdownHere);
        return f instanceof io.kolo.RankFailedException ? Outcomes.copy(f, "cannot start a new collective") : f;
    }

    private String why(boolean shutdownHere) {
        String removed = removedBecause;
        return removed != null ? removed
                : shutdownHere ? "Kolo was shut down on this rank (Kolo.shutdown()) before this op completed"
                : "another rank shut down (Kolo.shutdown()) before this op completed: it had run out of work (give"
                + " every rank the same number of steps, or end each rank's loop with join()), or it failed (see its"
                + " output)";
    }
}
