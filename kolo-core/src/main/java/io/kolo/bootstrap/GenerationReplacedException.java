package io.kolo.bootstrap;

import io.kolo.KoloException;

/**
 * The elastic launcher published a newer generation while this worker waited for its peers in an older one, which
 * will never form: the worker should join the newer one ({@code Elastic.run} does).
 */
public final class GenerationReplacedException extends KoloException {
    private static final long serialVersionUID = 1L;

    GenerationReplacedException(int generation, int latest) {
        super("job " + generation + " was replaced by the launcher's job " + latest + " while it started");
    }
}
