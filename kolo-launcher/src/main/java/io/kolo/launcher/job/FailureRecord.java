package io.kolo.launcher.job;

import io.kolo.launcher.start.RankLaunch;

import io.kolo.bootstrap.RankFailure;
import io.kolo.bootstrap.StoreKeys;
import io.kolo.bootstrap.KeyValueStore;

import java.io.PrintStream;

/** Where a rank's failure is recorded, and which failure the job then reports. */
public interface FailureRecord {

    /** A failure the job ends with: the line that explains it and the launcher's exit code. */
    record Failure(String cause, int code) {
    }

    /**
     * Records that {@code rank} exited with {@code code} (non-zero) and returns the failure the job ends with:
     * this one, or, with several launchers (one per node), one that another launcher recorded first.
     */
    Failure record(RankLaunch rank, int code);

    /** The single launcher's record: the first exit it sees is the job's first failure. */
    static FailureRecord inStore(KeyValueStore store, PrintStream err) {
        return (failed, code) -> {
            String ownFailure = failed.start().ownFailure(failed.rank(), code);
            String cause = ownFailure != null ? ownFailure
                    : RankFailure.describe(failed.describe(), lastWords(store, failed.rank()), code);
            try {
                store.put(StoreKeys.failed(failed.rank()), cause);
                // Ranks may have recorded a messenger first (a rank that aborted on seeing this exit, over
                // TCP indistinguishable from the cause); the first exit is what they should name.
                store.put(StoreKeys.FIRST_FAILURE, StoreKeys.firstFailure(failed.rank(), cause));
            } catch (RuntimeException e) {
                synchronized (err) {
                    err.println("kolo: could not record the failure in the rendezvous store: " + e.getMessage());
                }
            }
            return new Failure(cause, code);
        };
    }

    /** What the rank recorded before it ended, if anything (and if the store still answers). */
    static String lastWords(KeyValueStore store, int rank) {
        try {
            return store.tryGet(StoreKeys.lastWords(rank)).orElse(null);
        } catch (RuntimeException storeGone) {
            return null;
        }
    }
}
