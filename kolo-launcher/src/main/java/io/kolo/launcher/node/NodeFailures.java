package io.kolo.launcher.node;

import io.kolo.launcher.job.FailureRecord;
import io.kolo.launcher.start.RankLaunch;

import io.kolo.bootstrap.RankFailure;
import io.kolo.bootstrap.StoreKeys;
import io.kolo.bootstrap.KeyValueStore;

import java.io.PrintStream;
import java.util.Optional;
import java.util.function.IntPredicate;

/**
 * Failures of a job with one launcher per node. Each launcher sees only its own ranks exit, so the first exit a
 * launcher sees may be a consequence of a failure elsewhere: the job's first failure is the one recorded first in
 * the store ({@code failure}), confirmed by its launcher ({@code failed/<rank>}, {@code exit/<rank>}), and every
 * node reports that one. A rank's own record of a peer it saw fail ({@code failure} naming another rank, not yet
 * confirmed) is kept too: that peer's launcher confirms it, or node 0 declares its node lost.
 */
final class NodeFailures implements FailureRecord {
    private final KeyValueStore store;
    private final PrintStream err;

    NodeFailures(KeyValueStore store, PrintStream err) {
        this.store = store;
        this.err = err;
    }

    @Override
    public FailureRecord.Failure record(RankLaunch rank, int code) {
        return record(rank.rank(), RankFailure.describe(rank.describe(), FailureRecord.lastWords(store, rank.rank()),
                code), code);
    }

    /** Records {@code cause} for {@code rank}; the failure the job ends with (this one unless one came first). */
    FailureRecord.Failure record(int rank, String cause, int code) {
        try {
            store.put(StoreKeys.failed(rank), cause);
            store.put("exit/" + rank, Integer.toString(code));
            Optional<String> first = store.tryGet(StoreKeys.FIRST_FAILURE);
            int firstRank = first.map(NodeFailures::rankOf).orElse(rank);
            if (firstRank != rank) {
                Optional<FailureRecord.Failure> confirmed = confirmed(firstRank);
                if (confirmed.isPresent()) {
                    return new FailureRecord.Failure(cause + ", after " + confirmed.get().cause(), confirmed.get().code());
                }
                String seen = first.get().substring(first.get().indexOf('\t') + 1);
                return new FailureRecord.Failure(cause + ", after rank " + firstRank + " failed (" + seen + ")", code);
            }
            store.put(StoreKeys.FIRST_FAILURE, StoreKeys.firstFailure(rank, cause));
        } catch (RuntimeException e) {
            synchronized (err) {
                err.println("kolo: could not record the failure in the rendezvous store: " + e.getMessage());
            }
        }
        return new FailureRecord.Failure(cause, code);
    }

    /** The job's first failure, once its launcher has confirmed it, unless it is one of {@code ours}. */
    Optional<FailureRecord.Failure> first(IntPredicate ours) {
        Optional<String> first = store.tryGet(StoreKeys.FIRST_FAILURE);
        if (first.isEmpty()) {
            return Optional.empty();
        }
        int rank = rankOf(first.get());
        return rank < 0 || ours.test(rank) ? Optional.empty() : confirmed(rank);
    }

    private Optional<FailureRecord.Failure> confirmed(int rank) {
        return store.tryGet(StoreKeys.failed(rank)).map(cause -> new FailureRecord.Failure(cause,
                store.tryGet("exit/" + rank).map(NodeFailures::code).orElse(1)));
    }

    private static int rankOf(String record) {
        try {
            return Integer.parseInt(record.substring(0, Math.max(0, record.indexOf('\t'))));
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    private static int code(String value) {
        try {
            return Integer.parseInt(value);
        } catch (NumberFormatException e) {
            return 1;
        }
    }
}
