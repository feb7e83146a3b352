package io.kolo;

import io.kolo.bootstrap.Durations;
import io.kolo.bootstrap.LazyLogger;
import io.kolo.bootstrap.RankFailure;
import io.kolo.bootstrap.StoreKeys;
import io.kolo.bootstrap.KeyValueStore;
import io.kolo.collective.Hosts;
import io.kolo.transport.PeerFailedException;
import io.kolo.transport.PeerTimeoutException;
import io.kolo.transport.PeerWait;
import io.kolo.transport.Transport;

import java.util.List;
import java.util.Optional;

/**
 * Turns "my connection to rank 3 broke" into "rank 2 exited with code 3": the first rank to see a failure
 * records it in the job's store, the launcher records exit codes there, and every rank reports the first
 * failure with the best cause known. It then aborts this rank's transport so that ranks waiting on this one
 * find out at once instead of at their timeout.
 *
 * <p>A peer that aborted is a messenger, not the cause: it aborted because it saw a failure (usually another
 * rank's) and records that failure itself a moment later, so a rank that sees an abort waits for the record
 * rather than racing it with "rank 0 aborted". The launcher, which knows which process exited first, may
 * overwrite the record; ranks read it again until the cause it names is known. A rank never names itself for a
 * peer's failure: a record that does was made by a peer that saw it close, and it replaces that record with what it saw.
 */
final class FailureDiagnosis implements io.kolo.engine.FailureExplainer {
    private static final System.Logger LOG = LazyLogger.of(FailureDiagnosis.class);

    private static final long CAUSE_WAIT_MILLIS = 2000;
    /** How long an exchange must have waited on one peer before a timed-out caller's message names that peer. */
    private static final long REPORTED_STALL_NANOS = 1_000_000_000L;
    /** How long a timed-out rank waits for the store to take its record of the rank that stopped answering. */
    private static final long STORE_MILLIS = 2000;
    /** What a rank that stopped answering may be, at the end of every message that names one. */
    private static final String STOPPED = "it may have died or been stopped, or its host cut off from the network";
    /** How long one wait for last words in the store lasts, between looks at the job's failure record. */
    private static final long LAST_WORDS_WAIT_NANOS = 100_000_000;
    private final int rank;
    private final KeyValueStore store;
    private final Transport transport;
    // Without a launcher rank 0 serves the store: a store that cannot be reached then means rank 0 is gone.
    private final boolean storeInRankZero;
    /** Every rank's host, as the ranks told each other at start; null when not exchanged. */
    private final Hosts hosts;
    private final StallWatch watch;

    FailureDiagnosis(int rank, KeyValueStore store, Transport transport) {
        this(rank, store, transport, false, null, null);
    }

    /**
     * @param storeInRankZero rank 0 serves {@code store} (no launcher does), so the store goes when rank 0 goes
     * @param hosts           where the ranks run, for naming the host of a rank that stopped answering; held by every
     *                        rank since the start, so it names hosts when the store is gone too (null: none named)
     * @param watch           which ranks wait on which, for finding the one that stopped answering; null: the peer
     *                        waited on is named
     */
    FailureDiagnosis(int rank, KeyValueStore store, Transport transport, boolean storeInRankZero, Hosts hosts,
                     StallWatch watch) {
        this.rank = rank;
        this.store = store;
        this.transport = transport;
        this.storeInRankZero = storeInRankZero;
        this.hosts = hosts;
        this.watch = watch;
    }

    @Override
    public String explainStall(String op) {
        PeerWait waited = transport.stalledOn();
        // A wait that only just began is no one's fault yet; the caller's own message says enough then.
        if (waited == null || waited.stalledNanos() < REPORTED_STALL_NANOS) {
            return null;
        }
        Stall stall = stall(waited, op);
        record(stall);
        return stall.text;
    }

    /**
     * Records the rank that stopped answering as the job's first failure, before this rank gives up on it: the ranks
     * that see this one leave then name that rank, not this one. Bounded, since the store may be served on the host
     * that stopped answering.
     */
    private void record(Stall stall) {
        BoundedStore.putIfAbsent(store, StoreKeys.FIRST_FAILURE, StoreKeys.firstFailure(stall.rank, stall.text),
                STORE_MILLIS);
    }

    /** The rank that stopped answering, and the message that names it. */
    private record Stall(int rank, String text) {
    }

    /**
     * "rank 2 (host h2) sent nothing for 300 s while rank 0 waited to receive 4096 bytes from it (0 received) in
     * allreduce 'grad.w'; ...", or, when the peer waited on waits itself, "rank 2 (host h2) stopped answering: rank 0
     * waited 300 s to receive ... from rank 1 (...) in allreduce 'grad.w', which waits on rank 2; ...": the rank that
     * stopped answering, with its host, since that is what to look at (a stopped process, or a host cut off from the
     * network, which closes no connection).
     *
     * @param op the op being exchanged, as "allreduce 'grad.w'", or null when the message says it elsewhere
     */
    private Stall stall(PeerWait waited, String op) {
        StallWatch.Chain chain = watch == null ? new StallWatch.Chain(List.of(waited.peer()), false)
                : watch.chainFrom(waited.peer());
        int stopped = chain.stopped();
        String named = named(stopped);
        String in = op == null ? "" : " in " + op;
        String maybe = "; " + STOPPED;
        if (stopped == waited.peer()) {
            return new Stall(stopped, named + (waited.receiving() ? " sent nothing for " : " took nothing for ")
                    + seconds(waited.stalledNanos()) + " while rank " + waited.rank() + " waited to "
                    + waited.what("it") + in + (chain.storeSilent() ? ", and the job's store does not answer" : "")
                    + maybe);
        }
        StringBuilder via = new StringBuilder();
        int last = chain.storeSilent() ? chain.ranks().size() - 1 : chain.ranks().size();
        for (int i = 1; i < last; i++) {
            via.append(", which waits on rank ").append(chain.ranks().get(i));
        }
        if (last < chain.ranks().size()) {
            // Inferred: rank 0 serves the store, and neither answers.
            via.append(", and the job's store, which rank ").append(stopped).append(" serves, does not answer");
        }
        return new Stall(stopped, named + " stopped answering: rank " + waited.rank() + " waited "
                + seconds(waited.stalledNanos()) + " to " + waited.what("rank " + waited.peer()) + in + via + maybe);
    }

    /** "rank 2 (host node1)", or "rank 2" when its host is not known. */
    private String named(int r) {
        return "rank " + r + (hosts == null ? "" : hosts.name(r).map(h -> " (host " + h + ")").orElse(""));
    }

    private static String seconds(long nanos) {
        long ms = nanos / 1_000_000;
        return Durations.describe(java.time.Duration.ofMillis(ms < 1000 ? ms : Math.round(ms / 1000.0) * 1000));
    }

    @Override
    public RuntimeException explain(RuntimeException failure) {
        if (failure instanceof PeerTimeoutException timedOut && timedOut.waited() != null) {
            return explainTimeout(timedOut);
        }
        RuntimeException result = failure;
        try {
            if (failure instanceof PeerFailedException p) {
                if (!p.peerAborted()) {
                    store.putIfAbsent(StoreKeys.FIRST_FAILURE, StoreKeys.firstFailure(p.peer(), p.getMessage()));
                }
                Record first = awaitCause(new Record(p.peer(), p.getMessage()));
                result = new RankFailedException(first.rank, first.cause, p);
            } else {
                // This rank fails on its own (a timeout, an internal error): the peers that see it abort name it.
                String cause = "rank " + rank + " failed: " + failure.getMessage();
                store.putIfAbsent(StoreKeys.failed(rank), cause);
                store.putIfAbsent(StoreKeys.FIRST_FAILURE, StoreKeys.firstFailure(rank, cause));
            }
        } catch (RuntimeException storeGone) {
            LOG.log(System.Logger.Level.DEBUG, "failure store unreachable", storeGone);
            if (failure instanceof PeerFailedException p) {
                Record lost = storeLost(new Record(p.peer(), p.getMessage()));
                result = new RankFailedException(lost.rank, lost.cause, p);
            }
        }
        try {
            transport.abort(result);
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.DEBUG, "abort after failure", e);
        }
        return result;
    }

    /**
     * This rank's exchange gave up on the peer it waited on: it says which rank stopped answering, records that rank as
     * the job's first failure (the ranks that see this one abort name it too) and aborts as for any failure.
     */
    private RuntimeException explainTimeout(PeerTimeoutException timedOut) {
        Stall stall = stall(timedOut.waited(), null);
        KoloTimeoutException result = new KoloTimeoutException("rank " + rank + " timed out: " + stall.text
                + "; raise KOLO_TIMEOUT_SECONDS if ranks legitimately wait this long");
        result.initCause(timedOut);
        record(stall);
        try {
            transport.abort(result);
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.DEBUG, "abort after failure", e);
        }
        return result;
    }

    /**
     * Waits a moment for the job's first failure to be recorded, since the rank that shut down while this one still
     * had ops usually did so in a {@code finally} block on its way to failing; when a failure of another rank is
     * recorded in time, the ops fail naming it. Where no launcher records exits (mpirun, srun: rank 0 serves the store),
     * the failing rank's last words, recorded as its exception goes uncaught, name it instead; they are waited for in
     * the store itself, so this rank answers within a round trip of them, before mpirun, seeing that rank exit, kills
     * this one. Under a launcher they are only the fallback, its record (with the exit code) being the better one.
     * Nothing recorded (the rank simply ran out of work first): {@code plain}.
     */
    @Override
    public RuntimeException explainLeaving(RuntimeException plain) {
        long deadline = System.nanoTime() + CAUSE_WAIT_MILLIS * 1_000_000;
        try {
            while (true) {
                Optional<String> recorded = store.tryGet(StoreKeys.FIRST_FAILURE);
                if (recorded.isPresent()) {
                    Record first = Record.parse(recorded.get(), new Record(rank, plain.getMessage()));
                    if (first.rank == rank) {
                        return plain;
                    }
                    String cause = store.tryGet(StoreKeys.failed(first.rank)).orElse(first.cause);
                    return new RankFailedException(first.rank, cause, plain);
                }
                long left = deadline - System.nanoTime();
                Optional<Record> said = storeInRankZero || left <= 0
                        ? lastWords(Math.max(0, Math.min(left, LAST_WORDS_WAIT_NANOS))) : Optional.empty();
                if (said.isPresent()) {
                    return said.get().rank == rank ? plain // this rank is failing itself: nobody else to name
                            : new RankFailedException(said.get().rank, said.get().cause, plain);
                }
                if (left <= 0) {
                    return plain;
                }
                if (!storeInRankZero) {
                    Thread.sleep(50);
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException storeGone) {
            LOG.log(System.Logger.Level.DEBUG, "failure store unreachable after a rank shut down", storeGone);
        }
        return plain;
    }

    /**
     * The first last words a rank recorded, waiting at most {@code nanos} for them in the store: "rank 2 failed:
     * IllegalStateException: injected failure at iteration 20" (this rank's own as they were recorded).
     */
    private Optional<Record> lastWords(long nanos) {
        Optional<String> said = nanos < 1_000_000 ? store.tryGet(StoreKeys.FIRST_LAST_WORDS)
                : waitFor(StoreKeys.FIRST_LAST_WORDS, java.time.Duration.ofNanos(nanos));
        if (said.isEmpty()) {
            return Optional.empty();
        }
        Record words = Record.parse(said.get(), new Record(rank, ""));
        return Optional.of(words.rank == rank ? words
                : new Record(words.rank, RankFailure.describe("rank " + words.rank, words.cause, null)));
    }

    private Optional<String> waitFor(String key, java.time.Duration timeout) {
        try {
            return Optional.of(store.get(key, timeout));
        } catch (KoloTimeoutException notYet) {
            return Optional.empty();
        }
    }

    /**
     * The first failure and its best-known cause: whoever recorded the failure first, with the cause the
     * launcher (or the failed rank itself) records a moment later. Gives up after a short wait with what it
     * has, recording {@code seen} when nobody recorded anything.
     *
     * <p>The failed rank's last words are read on every pass, not only at the end: without a launcher the store
     * lives in rank 0, which may itself exit (having reported the same failure) before this rank's wait is over;
     * what was read before the store went away is then still the best cause known.
     */
    private Record awaitCause(Record seen) {
        long deadline = System.nanoTime() + CAUSE_WAIT_MILLIS * 1_000_000;
        Record first = null;
        Optional<String> words = Optional.empty();
        int wordsOf = -1;
        try {
            while (true) {
                Optional<String> recorded = store.tryGet(StoreKeys.FIRST_FAILURE);
                if (recorded.isPresent()) {
                    first = Record.parse(recorded.get(), seen);
                    if (first.rank == rank) {
                        // This rank is alive, explaining a peer's failure: whoever recorded it saw its connections
                        // close when it gave up on that peer (over TCP that looks like an exit). Put what it saw
                        // right, so neither it nor the others blame a rank that did not fail.
                        store.put(StoreKeys.FIRST_FAILURE, StoreKeys.firstFailure(seen.rank, seen.cause));
                        first = seen;
                    }
                    Optional<String> cause = store.tryGet(StoreKeys.failed(first.rank));
                    if (cause.isPresent()) {
                        return new Record(first.rank, cause.get());
                    }
                }
                int suspect = first != null ? first.rank : seen.rank;
                Optional<String> said = store.tryGet(StoreKeys.lastWords(suspect));
                if (said.isPresent()) {
                    words = said;
                    wordsOf = suspect;
                }
                if (System.nanoTime() > deadline) {
                    if (first == null) {
                        store.putIfAbsent(StoreKeys.FIRST_FAILURE, StoreKeys.firstFailure(seen.rank, seen.cause));
                    }
                    break;
                }
                Thread.sleep(50);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException storeGone) {
            LOG.log(System.Logger.Level.DEBUG, "failure store went away while waiting for the cause", storeGone);
            if (first == null) {
                first = storeLost(seen);
            }
        }
        Record known = first != null ? first : seen;
        // No launcher recorded the exit (mpirun, srun): the rank's own last words, when it had any.
        return words.isEmpty() || wordsOf != known.rank ? known
                : new Record(known.rank, RankFailure.describe("rank " + known.rank, words.get(), null));
    }

    /**
     * The failure to report when the store could not be reached before anything was read from it, {@code seen} being
     * what this rank saw itself. Where rank 0 served the store, rank 0 is gone: over TCP a peer that gave up on a failure
     * closes its connections without a word, exactly as a rank that died, so a rank that saw such a messenger first
     * would otherwise name a rank that is alive. Rank 0 surely is not, so it is named.
     */
    private Record storeLost(Record seen) {
        Optional<StallWatch.Chain> learnt = watch == null ? Optional.empty() : watch.learntFrom(seen.rank);
        if (learnt.isPresent() && learnt.get().stopped() != seen.rank) {
            // This rank had long waited on the peer that left, and that peer on another: the one that stopped.
            StallWatch.Chain chain = learnt.get();
            int stopped = chain.stopped();
            StringBuilder via = new StringBuilder();
            for (int i = 1; i < chain.ranks().size(); i++) {
                via.append(", which waited on rank ").append(chain.ranks().get(i));
            }
            return new Record(stopped, named(stopped) + " stopped answering: rank " + rank + " waited on rank "
                    + seen.rank + via + "; " + STOPPED + " (then this rank saw: " + seen.cause + ")");
        }
        if (!storeInRankZero || seen.rank == 0 || rank == 0) {
            return seen;
        }
        return new Record(0, named(0) + " is gone or stopped answering, and the job's store it serves with it; "
                + STOPPED + " (this rank saw: " + seen.cause + ")");
    }

    private record Record(int rank, String cause) {
        static Record parse(String value, Record fallback) {
            String[] parts = value.split("\t", 2);
            try {
                return new Record(Integer.parseInt(parts[0]), parts.length > 1 ? parts[1] : fallback.cause);
            } catch (NumberFormatException e) {
                return fallback;
            }
        }
    }

    @Override
    public String toString() {
        return "FailureDiagnosis[rank " + rank + "]";
    }
}
