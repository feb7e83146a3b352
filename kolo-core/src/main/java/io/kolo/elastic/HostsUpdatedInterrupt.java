package io.kolo.elastic;

/**
 * Thrown by {@link ElasticState#commit()} on every rank at once when the launcher has published a new job (hosts were
 * added or removed): {@link Elastic#run} re-joins without restoring, since the state was just committed.
 */
final class HostsUpdatedInterrupt extends RuntimeException {
    private static final long serialVersionUID = 1L;

    HostsUpdatedInterrupt(int generation) {
        super("the launcher published job " + generation, null, false, false);
    }
}
