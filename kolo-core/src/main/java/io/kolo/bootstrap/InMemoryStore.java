package io.kolo.bootstrap;

import io.kolo.KoloTimeoutException;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A {@link KeyValueStore} held in this JVM's memory, for groups whose ranks are threads of one process
 * (and for tests). Thread-safe; {@link #get} blocks until the key is put or the timeout passes.
 */
public final class InMemoryStore implements KeyValueStore {
    private final ReentrantLock lock = new ReentrantLock();
    // One condition for all keys: puts are rare (a few per rank per job), so waking every waiter is cheap.
    private final Condition changed = lock.newCondition();
    private final Map<String, String> values = new HashMap<>();
    private boolean closed;

    /** An empty store. */
    public InMemoryStore() {
    }

    @Override
    public void put(String key, String value) {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(value, "value");
        lock.lock();
        try {
            checkOpen();
            values.put(key, value);
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    @Override
    public boolean putIfAbsent(String key, String value) {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(value, "value");
        lock.lock();
        try {
            checkOpen();
            if (values.putIfAbsent(key, value) != null) {
                return false;
            }
            changed.signalAll();
            return true;
        } finally {
            lock.unlock();
        }
    }

    @Override
    public Optional<String> tryGet(String key) {
        Objects.requireNonNull(key, "key");
        lock.lock();
        try {
            return Optional.ofNullable(values.get(key));
        } finally {
            lock.unlock();
        }
    }

    @Override
    public String get(String key, Duration timeout) {
        Objects.requireNonNull(key, "key");
        long remaining = Math.max(0, timeout.toNanos());
        lock.lock();
        try {
            while (true) {
                String v = values.get(key);
                if (v != null) {
                    return v;
                }
                checkOpen();
                if (remaining <= 0) {
                    throw new KoloTimeoutException("timed out after " + Durations.describe(timeout)
                            + " waiting for key '" + key + "' in the rendezvous store");
                }
                try {
                    remaining = changed.awaitNanos(remaining);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new KoloTimeoutException("interrupted while waiting for key '" + key
                            + "' in the rendezvous store");
                }
            }
        } finally {
            lock.unlock();
        }
    }

    @Override
    public List<String> getEach(String prefix, int count, Duration timeout) {
        Objects.requireNonNull(prefix, "prefix");
        long remaining = Math.max(0, timeout.toNanos());
        List<String> found = new ArrayList<>(count);
        lock.lock();
        try {
            while (true) {
                // Keys found stay found (nothing is removed), so a wake-up only looks from the first one missing.
                for (String v; found.size() < count && (v = values.get(prefix + found.size())) != null; ) {
                    found.add(v);
                }
                if (found.size() == count) {
                    return found;
                }
                checkOpen();
                if (remaining <= 0) {
                    throw new KoloTimeoutException("timed out after " + Durations.describe(timeout)
                            + " waiting for key '" + prefix + found.size() + "' in the rendezvous store");
                }
                try {
                    remaining = changed.awaitNanos(remaining);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new KoloTimeoutException("interrupted while waiting for key '" + prefix + found.size()
                            + "' in the rendezvous store");
                }
            }
        } finally {
            lock.unlock();
        }
    }

    /** Wakes every waiting {@link #get}, which then fails; later puts fail too. Idempotent. */
    @Override
    public void close() {
        lock.lock();
        try {
            closed = true;
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    private void checkOpen() {
        if (closed) {
            throw new IllegalStateException("the in-memory rendezvous store is closed");
        }
    }
}
