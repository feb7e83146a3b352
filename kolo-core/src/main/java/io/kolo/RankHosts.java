package io.kolo;

import io.kolo.bootstrap.KeyValueStore;
import io.kolo.bootstrap.StoreKeys;

import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Which host each rank of the job runs on, for a message that names a rank that stopped answering: every rank
 * publishes its host's name in the job's store as it joins (the name its launcher gave it, else the machine's), and
 * the failure path looks one up. A rank whose host is cut off cannot be asked; the store can, unless that host serves
 * it (rank 0 without a launcher), and then the store's address is that host.
 */
final class RankHosts {
    /** How long a message waits for the store to say a rank's host: a store that does not answer must not hold it. */
    private static final long LOOKUP_MILLIS = 2000;

    private final KeyValueStore store;
    private final String rankZeroHost;
    private final Map<Integer, String> known = new ConcurrentHashMap<>();

    /**
     * @param store        where the ranks of this job published their hosts
     * @param rankZeroHost rank 0's host when rank 0 serves {@code store} (no launcher), else null
     */
    RankHosts(KeyValueStore store, String rankZeroHost) {
        this.store = store;
        this.rankZeroHost = rankZeroHost;
    }

    /** Publishes {@code rank}'s host, as it joins. */
    static void publish(KeyValueStore store, int rank, String host) {
        store.put(StoreKeys.hostName(rank), host);
    }

    /**
     * {@code rank}'s host, or empty when the store does not say (in time). Rank 0's, where it serves the store, is the
     * store's address unless {@link #learn} read its name before: that store may be what stopped answering.
     */
    Optional<String> of(int rank) {
        String host = known.get(rank);
        if (host != null) {
            return Optional.of(host);
        }
        if (rank == 0 && rankZeroHost != null) {
            return Optional.of(rankZeroHost);
        }
        return learn(rank);
    }

    /** Reads {@code rank}'s host from the store now (while it answers), for a later {@link #of}. */
    Optional<String> learn(int rank) {
        Optional<String> found = BoundedStore.read(store, StoreKeys.hostName(rank), LOOKUP_MILLIS).value();
        found.ifPresent(h -> known.put(rank, h));
        return found;
    }

    /** Whether {@code rank}'s host was read already. */
    boolean knows(int rank) {
        return known.containsKey(rank);
    }
}
