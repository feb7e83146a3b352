package io.kolo.engine;

/**
 * Why a set's ops end on a rank that did not ask for its end: another rank shut down. That rank has usually failed
 * (programs shut down in a {@code finally} block that an exception unwinds through), and a moment later the job records
 * its failure; this asks the explainer for it once per set, so that only the first op to find the set ended waits for
 * it, and every later one is told the same.
 */
final class LeftByAnother {
    private final FailureExplainer explainer;
    private boolean asked;
    private RuntimeException failure;

    LeftByAnother(FailureExplainer explainer) {
        this.explainer = explainer;
    }

    /** The failure of the rank that left (the first time, after waiting a moment for it), or null when none is known. */
    synchronized RuntimeException failure(String plain) {
        if (!asked) {
            asked = true;
            io.kolo.KoloException ended = new io.kolo.KoloException(plain);
            RuntimeException explained = explainer.explainLeaving(ended);
            failure = explained == ended ? null : explained;
        }
        return failure;
    }
}
