package io.kolo.launcher.job;

import io.kolo.launcher.elastic.ElasticDriver;

/**
 * What the {@link Supervisor} does when something happens to the job: the only difference between a static job (fail
 * fast: one worker's failure stops them all, {@link Job}) and an elastic one (the survivors go on in a next
 * generation, within the reset limit, the size bounds and the host blacklist: {@link ElasticDriver}). Each method
 * returns the launcher's exit code once the job is over, else null.
 */
public interface RestartPolicy {

    /** Starts the first workers through {@code supervisor}'s {@link WorkerGroup}. */
    Integer start(Supervisor supervisor) throws InterruptedException;

    /** A worker exited (with code 0 or not), or the job failed elsewhere. */
    Integer handle(WorkerGroup.Event event) throws InterruptedException;

    /** Nothing happened for a moment (an elastic job polls its hosts here). */
    default Integer idle() throws InterruptedException {
        return null;
    }

    /** The workers are gone: releases what the job held (its rendezvous store). */
    default void close() {
    }
}
