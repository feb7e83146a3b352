package io.kolo;

import io.kolo.bootstrap.KeyValueStore;
import io.kolo.transport.PeerFailedException;
import io.kolo.transport.Transport;

import java.util.Optional;

/**
 * Turns "my connection to rank 3 broke" into "rank 2 exited with code 3": the first rank to see a failure
 * records it in the job's store, the launcher records exit codes there, and every rank reports the first
 * failure with the best cause known. It then aborts this rank's transport so that ranks waiting on this one
 * find out at once instead of at their timeout.
 */
final class FailureDiagnosis implements io.kolo.engine.Engine.FailureExplainer {
    private static final System.Logger LOG = System.getLogger(FailureDiagnosis.class.getName());
    private static final long CAUSE_WAIT_MILLIS = 2000;
    private final int rank;
    private final KeyValueStore store;
    private final Transport transport;

    FailureDiagnosis(int rank, KeyValueStore store, Transport transport) {
        this.rank = rank;
        this.store = store;
        this.transport = transport;
    }

    @Override
    public RuntimeException explain(RuntimeException failure) {
        RuntimeException result = failure;
        if (failure instanceof PeerFailedException p) {
            int failed = p.peer();
            String seen = p.getMessage();
            try {
                store.putIfAbsent("failure", failed + "\t" + seen);
                Optional<String> first = store.tryGet("failure");
                if (first.isPresent()) {
                    String[] parts = first.get().split("\t", 2);
                    failed = Integer.parseInt(parts[0]);
                    seen = parts.length > 1 ? parts[1] : seen;
                }
                String cause = awaitCause(failed);
                result = new RankFailedException(failed, cause != null ? cause : seen, p);
            } catch (RuntimeException storeGone) {
                LOG.log(System.Logger.Level.DEBUG, "failure store unreachable", storeGone);
                result = new RankFailedException(failed, seen, p);
            }
        }
        try {
            transport.abort(result);
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.DEBUG, "abort after failure", e);
        }
        return result;
    }

    /** The launcher (or the rank itself) may record the real cause a moment after the connection broke. */
    private String awaitCause(int failed) {
        long deadline = System.nanoTime() + CAUSE_WAIT_MILLIS * 1_000_000;
        while (true) {
            Optional<String> cause = store.tryGet("failed/" + failed);
            if (cause.isPresent()) {
                return cause.get();
            }
            if (System.nanoTime() > deadline) {
                return null;
            }
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return null;
            }
        }
    }

    @Override
    public String toString() {
        return "FailureDiagnosis[rank " + rank + "]";
    }
}
