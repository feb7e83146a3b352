package io.kolo.elastic;

import io.kolo.KoloException;

/**
 * The launcher's new job has no place for this worker (its host was removed or blacklisted, or the job shrank to
 * {@code --max-np}): {@link Elastic#run} has left the job and throws this; the program should end. The launcher
 * expects it and does not count it as a failure.
 */
public class WorkerRemovedException extends KoloException {
    private static final long serialVersionUID = 1L;

    /** @param message why this worker was removed */
    public WorkerRemovedException(String message) {
        super(message);
    }
}
