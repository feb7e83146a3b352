package io.kolo.engine;

/**
 * Runs one kind of negotiated response on this rank, as Horovod's {@code ops/} classes do: moves the tensors of the
 * response into the collective's buffer (or uses them where they lie), calls the collective, and hands the results
 * back. Every rank runs the same responses in the same order, so an executor decides anything that changes which
 * collective calls it makes from the response alone.
 */
interface OpExecutor {
    /** @param negotiated when the ranks agreed on {@code r} (the timeline's clock; 0 without a timeline) */
    void execute(Response r, long negotiated);
}
