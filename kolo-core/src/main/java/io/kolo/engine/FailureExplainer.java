package io.kolo.engine;

/** Turns a transport-level failure into the exception users see (naming the failed rank and cause). */
@FunctionalInterface
public interface FailureExplainer {
    RuntimeException explain(RuntimeException failure);
}
