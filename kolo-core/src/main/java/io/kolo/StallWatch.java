package io.kolo;

import io.kolo.bootstrap.KeyValueStore;
import io.kolo.bootstrap.LazyLogger;
import io.kolo.bootstrap.StoreKeys;
import io.kolo.bootstrap.ThreadLimit;
import io.kolo.transport.PeerWait;
import io.kolo.transport.Transport;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Which rank a stuck exchange really waits on. In a ring every rank waits on a neighbour, so when one rank stops
 * answering (a stopped process, or a host cut off from the network, which closes no connection) the ranks behind it
 * wait on ranks that are alive and waiting themselves, and the first to give up may well name one of those.
 *
 * <p>So each rank's watch looks at its transport every so often, off the data path: once an exchange has waited on
 * one peer for a quarter of the op timeout, it publishes that peer in the job's store ({@link StoreKeys#stalledOn}), and it
 * clears the record when the exchange moves again. A rank that gives up follows the records from the peer it waited on
 * to the first rank that waits on nobody: the one that stopped. The ranks behind it began waiting within moments of
 * each other, so by the time the first gives up the others have published theirs.
 */
final class StallWatch implements AutoCloseable {
    private static final System.Logger LOG = LazyLogger.of(StallWatch.class);
    /** How long the failure path waits for each record it follows. */
    private static final long READ_MILLIS = 1000;
    private static final String NONE = "-";

    private final int rank;
    private final int size;
    private final Transport transport;
    private final KeyValueStore store;
    private final boolean storeInRankZero;
    /** What the watch's thread last learnt of the waits behind this rank's long wait; null when none. */
    private volatile Chain lastChain;
    private final long publishAfterNanos;
    private final long periodMillis;
    private final Thread thread;
    private volatile boolean closed;

    /**
     * Starts watching {@code transport}, whose exchanges give up after {@code timeout}.
     *
     * @param storeInRankZero rank 0 serves {@code store} (no launcher does)
     */
    StallWatch(int rank, int size, Transport transport, KeyValueStore store, boolean storeInRankZero,
               Duration timeout) {
        this.rank = rank;
        this.size = size;
        this.transport = transport;
        this.store = store;
        this.storeInRankZero = storeInRankZero;
        this.publishAfterNanos = timeout.toNanos() / 4;
        this.periodMillis = Math.max(10, Math.min(1000, timeout.toMillis() / 16));
        this.thread = ThreadLimit.start(Thread.ofPlatform().daemon().name("kolo-stall-watch-" + rank), this::watch,
                "rank " + rank + "'s stall watch");
    }

    private void watch() {
        int published = -1;
        try {
            while (!closed) {
                Thread.sleep(periodMillis);
                PeerWait waited = transport.stalledOn();
                int peer = waited != null && waited.stalledNanos() >= publishAfterNanos ? waited.peer() : -1;
                if (peer != published) {
                    store.put(StoreKeys.stalledOn(rank), peer < 0 ? NONE : Integer.toString(peer));
                    published = peer;
                }
                if (peer >= 0) {
                    // Learnt now, while the store answers: it may go with the rank that stopped (rank 0 serves it
                    // without a launcher) or with the first rank that gives up, before this one gives up too.
                    Chain chain = follow(peer);
                    if (!chain.storeSilent()) {
                        lastChain = chain;
                    }
                } else {
                    lastChain = null;
                }
            }
        } catch (InterruptedException e) {
            // Closed.
        } catch (RuntimeException e) {
            // The store is gone (the job ends, or its host does): nothing more to publish.
            LOG.log(System.Logger.Level.DEBUG, "rank " + rank + " stopped watching its exchanges", e);
        }
    }

    /**
     * The ranks from one this rank waited on to the one that stopped answering.
     *
     * @param ranks       [peer] when the peer published no wait, [peer, next, ..., stopped] when it waits on another
     * @param storeSilent the store did not answer; where rank 0 serves it, rank 0 ends {@code ranks} then, since it is
     *                    what stopped answering as far as this rank can tell
     */
    record Chain(List<Integer> ranks, boolean storeSilent) {
        int stopped() {
            return ranks.getLast();
        }
    }

    /**
     * Follows the published waits from {@code peer}, which this rank waited on (see {@link Chain}); where the store
     * does not answer, what this watch learnt from it while this rank waited on {@code peer}, if anything.
     */
    Chain chainFrom(int peer) {
        Chain chain = follow(peer);
        Chain learnt = lastChain;
        return chain.storeSilent() && learnt != null && learnt.ranks().getFirst() == peer ? learnt : chain;
    }

    /**
     * The chain this watch last learnt while this rank waited long on {@code peer}, if that wait was still on when
     * the watch last looked: for a rank whose connection to {@code peer} then closed (the peer gave up on the rank
     * that stopped) and that cannot ask the store any more.
     */
    Optional<Chain> learntFrom(int peer) {
        Chain learnt = lastChain;
        return learnt != null && learnt.ranks().getFirst() == peer ? Optional.of(learnt) : Optional.empty();
    }

    private Chain follow(int peer) {
        List<Integer> chain = new ArrayList<>();
        chain.add(peer);
        for (int at = peer; chain.size() <= size; ) {
            BoundedStore.Read next = BoundedStore.read(store, StoreKeys.stalledOn(at), READ_MILLIS);
            if (!next.answered()) {
                if (storeInRankZero && rank != 0 && !chain.contains(0)) {
                    chain.add(0);
                }
                return new Chain(chain, true);
            }
            int n;
            try {
                n = next.value().isEmpty() || next.value().get().equals(NONE) ? -1
                        : Integer.parseInt(next.value().get());
            } catch (NumberFormatException e) {
                n = -1;
            }
            if (n < 0 || n == rank || chain.contains(n)) {
                // Waits on nobody, or the waits go round (ranks that wait on each other, not a stopped one).
                break;
            }
            chain.add(n);
            at = n;
        }
        return new Chain(chain, false);
    }

    @Override
    public void close() {
        closed = true;
        thread.interrupt();
    }
}
