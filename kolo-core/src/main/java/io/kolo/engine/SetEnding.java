package io.kolo.engine;

import io.kolo.KoloException;

/**
 * Whether a process set on this rank still takes ops, and why not: its failure (the job's, or the set's stall
 * shutdown), a shutdown asked for here, its removal, or its end. The one owner of that state: {@link ProcessSetEngine}
 * records each event here and asks what an op fails with. Read from any thread (submissions), written by the thread
 * running the cycle and by {@link #requestShutdown}.
 *
 * <p>A set that ended with no failure of its own fails its ops saying why: its removal, this rank's shutdown, or
 * another rank's. A rank that shuts down under the others' ops has usually failed (programs shut down in a
 * {@code finally} block that an exception unwinds through), and a moment later the job records its failure: the
 * explainer is asked for it once per set, so that only the first op to find the set ended waits for it.
 */
final class SetEnding {
    private final int rank;
    private final FailureExplainer explainer;
    /** The set's failure, once it failed; every later op fails with a copy. */
    private volatile RuntimeException fatal;
    private volatile boolean shutdownRequested;
    /** Closed: the cycles have stopped, nothing more runs. */
    private volatile boolean terminated;
    private volatile String removedBecause;
    private boolean asked;
    /** The failure of the rank whose shutdown ended the set, once known; guarded by this. */
    private RuntimeException failure;

    SetEnding(int rank, FailureExplainer explainer) {
        this.rank = rank;
        this.explainer = explainer;
    }

    /** The set failed with {@code error} (a crash of its cycle replaces an earlier failure: it explains more). */
    void failed(RuntimeException error) {
        fatal = error;
    }

    /** The set failed with {@code error} unless it had failed already; whether this was its first failure. */
    boolean failedFirst(RuntimeException error) {
        if (fatal != null) {
            return false;
        }
        fatal = error;
        return true;
    }

    /** The set's failure, or null. */
    RuntimeException fatal() {
        return fatal;
    }

    /** This rank asks every rank of the set to stop (they agree on it in a cycle's vote). */
    void requestShutdown() {
        shutdownRequested = true;
    }

    boolean shutdownRequested() {
        return shutdownRequested;
    }

    /** The set was removed: what is left fails saying {@code why}. */
    void removed(String why) {
        removedBecause = why;
    }

    /** The set's cycles stopped. */
    void terminated() {
        terminated = true;
    }

    boolean isTerminated() {
        return terminated;
    }

    /** Whether the set runs and takes ops: no failure, no shutdown asked for, not ended. */
    boolean running() {
        return fatal == null && !terminated && !shutdownRequested;
    }

    /** Throws what a new collective fails with when the set does not take it. */
    void checkUsable() {
        RuntimeException f = fatal;
        if (f != null) {
            throw Outcomes.copy(f, "cannot start a new collective");
        }
        if (terminated) {
            throw refusal();
        }
        if (shutdownRequested) {
            throw new KoloException("Kolo has been shut down on rank " + rank
                    + "; call Kolo.init() again to start a new job");
        }
    }

    /**
     * What an op still queued fails with once the set ended: its failure, else why it ended. An op can reach the queue
     * after the set's last look at it (submitted while the set closed), so this too asks for the failure of the rank
     * whose shutdown ended the set, as {@link #failure} does; only the first asker waits.
     */
    RuntimeException forQueued() {
        RuntimeException f = fatal;
        return f != null ? f : failure();
    }

    /** Why the set's ops fail now that it ended without a failure; never waits. */
    synchronized RuntimeException known() {
        boolean shutdownHere = shutdownRequested;
        return failure != null && !shutdownHere ? failure : new KoloException(why(shutdownHere));
    }

    /**
     * As {@link #known}, but when another rank's shutdown ended the set (not this rank's, nor a removal), the first
     * call waits a moment for that rank's failure to be recorded: ops then fail naming it.
     */
    synchronized RuntimeException failure() {
        if (!asked && !shutdownRequested && removedBecause == null) {
            asked = true;
            KoloException ended = new KoloException(why(false));
            RuntimeException explained = explainer.explainLeaving(ended);
            failure = explained == ended ? null : explained;
        }
        return known();
    }

    /** What a collective started after the set ended fails with (see {@link #failure}). */
    private RuntimeException refusal() {
        RuntimeException f = failure();
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
