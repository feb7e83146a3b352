package io.kolo.engine;

/** Turns a transport-level failure into the exception users see (naming the failed rank and cause). */
@FunctionalInterface
public interface FailureExplainer {
    RuntimeException explain(RuntimeException failure);

    /**
     * Ops of this rank ended because another rank shut down (its {@code finally} block calling shutdown as an exception
     * unwound there, or it ran out of work first): the failure the job records a moment later when that rank's process
     * fails, naming it and its cause; {@code plain} when nothing is recorded in time.
     */
    default RuntimeException explainLeaving(RuntimeException plain) {
        return plain;
    }

    /**
     * Which peer this rank's exchange of {@code op} (as "allreduce 'grad.w'") waits on, with its host, when nothing
     * has moved for a while (a stopped process, a host cut off): for a caller whose wait ran out meanwhile, which gives
     * up on that rank, so it is recorded as the job's first failure for the other ranks to name; null when the
     * exchange is not stuck on a peer, or that is not known.
     */
    default String explainStall(String op) {
        return null;
    }
}
