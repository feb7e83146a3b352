package io.kolo.engine;

import io.kolo.KoloException;

import java.util.List;

/** What a rank's engine says when a cycle fails: the cause in the user's terms where it can tell, then explained. */
final class EngineCrash {
    private EngineCrash() {
    }

    /**
     * @param pending the ops the engine was running or waiting for
     * @param explainer adds what the other ranks know (who failed first, and why)
     */
    static RuntimeException explain(int rank, Throwable e, List<Op> pending, FailureExplainer explainer) {
        RuntimeException cause = e instanceof RuntimeException re ? re
                : new KoloException("rank " + rank + " engine crashed: " + e, e);
        Op freed = withFreedMemory(pending);
        if (freed != null) {
            // What the transport or a kernel saw is a closed segment, which reads as a fault of Kolo's own
            // memory ("shared memory unmapped"); the user's mistake is closing the tensor's arena too early.
            cause = new KoloException("rank " + rank + ": the memory of " + freed.kind.label() + " '" + freed.name
                    + "' was freed (its Arena closed) before the op completed; keep a tensor's memory alive until"
                    + " its handle's await() has returned", e);
        }
        try {
            return explainer.explain(cause);
        } catch (RuntimeException ex) {
            return cause;
        }
    }

    /** A pending op whose memory, the caller's, is no longer alive; null when there is none. */
    private static Op withFreedMemory(List<Op> pending) {
        for (Op op : pending) {
            if (!op.input.scope().isAlive() || (op.into != null && !op.into.scope().isAlive())) {
                return op;
            }
        }
        return null;
    }
}
