package io.kolo.engine;

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
    private RuntimeException failure;

    SetEnding(FailureExplainer explainer) {
        this.explainer = explainer;
    }

    /** The set was removed: what is left fails saying {@code why}. */
    void removed(String why) {
        removedBecause = why;
    }

    /** Why the set's ops failed, given whether this rank asked for the shutdown. */
    String why(boolean shutdownHere) {
        String removed = removedBecause;
        return removed != null ? removed
                : shutdownHere ? "Kolo was shut down on this rank (Kolo.shutdown()) before this op completed"
                : "another rank shut down (Kolo.shutdown()) before this op completed: it had run out of work (give"
                + " every rank the same number of steps, or end each rank's loop with join()), or it failed (see its"
                + " output)";
    }

    /**
     * When another rank's shutdown ended the set (not this rank's, nor a removal) and that rank's process failed: its
     * failure, waited for a moment the first time; else null.
     */
    synchronized RuntimeException failureOfAnother(boolean shutdownHere) {
        if (shutdownHere || removedBecause != null) {
            return null;
        }
        if (!asked) {
            asked = true;
            io.kolo.KoloException ended = new io.kolo.KoloException(why(false));
            RuntimeException explained = explainer.explainLeaving(ended);
            failure = explained == ended ? null : explained;
        }
        return failure;
    }
}
