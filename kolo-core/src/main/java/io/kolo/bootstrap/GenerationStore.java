package io.kolo.bootstrap;

import io.kolo.KoloTimeoutException;

import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * One elastic generation's view of the launcher's store (its keys under {@code g<generation>/}), whose waits end as
 * soon as the launcher has published a newer generation. A generation that lost a worker while it formed (the
 * replacement for a dead rank died too) never forms; its other workers must go to the next one at once rather than
 * wait out the start timeout for a peer that is gone.
 */
final class GenerationStore implements KeyValueStore {
    // How often a wait looks for a newer generation: small beside a worker's start, one round trip to the store each.
    private static final Duration CHECK_EVERY = Duration.ofSeconds(1);

    private final KeyValueStore store;
    private final KeyValueStore scoped;
    private final int generation;

    GenerationStore(KeyValueStore store, int generation) {
        this.store = store;
        this.scoped = new PrefixedStore(store, "g" + generation + "/");
        this.generation = generation;
    }

    @Override
    public void put(String key, String value) {
        scoped.put(key, value);
    }

    @Override
    public boolean putIfAbsent(String key, String value) {
        return scoped.putIfAbsent(key, value);
    }

    @Override
    public Optional<String> tryGet(String key) {
        return scoped.tryGet(key);
    }

    /** @throws GenerationReplacedException when the launcher publishes a newer generation meanwhile */
    @Override
    public String get(String key, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            long left = deadline - System.nanoTime();
            try {
                return scoped.get(key, Duration.ofNanos(Math.max(1, Math.min(left, CHECK_EVERY.toNanos()))));
            } catch (KoloTimeoutException e) {
                checkStillForming();
                if (deadline - System.nanoTime() <= 0) {
                    throw new KoloTimeoutException("timed out after " + Durations.describe(timeout)
                            + " waiting for key '" + key + "' in " + scoped);
                }
            }
        }
    }

    /** @throws GenerationReplacedException when the launcher publishes a newer generation meanwhile */
    @Override
    public List<String> getEach(String prefix, int count, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            long left = deadline - System.nanoTime();
            try {
                return scoped.getEach(prefix, count, Duration.ofNanos(Math.max(1, Math.min(left, CHECK_EVERY.toNanos()))));
            } catch (KoloTimeoutException e) {
                checkStillForming();
                if (deadline - System.nanoTime() <= 0) {
                    throw new KoloTimeoutException("timed out after " + Durations.describe(timeout)
                            + " waiting for keys '" + prefix + "0' to '" + prefix + (count - 1) + "' in " + scoped);
                }
            }
        }
    }

    /** @throws GenerationReplacedException when the launcher has published a newer generation */
    @Override
    public void checkStillForming() {
        int latest = store.tryGet(ElasticGeneration.LATEST).map(Integer::parseInt).orElse(generation);
        if (latest > generation) {
            throw new GenerationReplacedException(generation, latest);
        }
    }

    @Override
    public void close() {
        scoped.close();
    }

    @Override
    public String toString() {
        return scoped.toString();
    }
}
