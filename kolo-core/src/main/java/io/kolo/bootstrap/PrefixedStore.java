package io.kolo.bootstrap;

import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * One job's view of a store several jobs share: every key gets the job's prefix, so an elastic launcher's successive
 * jobs (their {@code addr/<rank>}, {@code failure} and {@code failed/<rank>} keys) never see each other's values.
 */
final class PrefixedStore implements KeyValueStore {
    private final KeyValueStore store;
    private final String prefix;

    PrefixedStore(KeyValueStore store, String prefix) {
        this.store = store;
        this.prefix = prefix;
    }

    @Override
    public void put(String key, String value) {
        store.put(prefix + key, value);
    }

    @Override
    public boolean putIfAbsent(String key, String value) {
        return store.putIfAbsent(prefix + key, value);
    }

    @Override
    public Optional<String> tryGet(String key) {
        return store.tryGet(prefix + key);
    }

    @Override
    public String get(String key, Duration timeout) {
        return store.get(prefix + key, timeout);
    }

    @Override
    public List<String> getEach(String keyPrefix, int count, Duration timeout) {
        return store.getEach(prefix + keyPrefix, count, timeout);
    }

    /** Closes the underlying store: a rank's connection is its own, one per job. */
    @Override
    public void close() {
        store.close();
    }

    @Override
    public String toString() {
        return store + " (keys under " + prefix + ")";
    }
}
