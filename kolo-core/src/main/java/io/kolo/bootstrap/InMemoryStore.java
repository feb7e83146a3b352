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
    private final Map<String, String> values = new HashMap<>();
    // A put wakes only the requests it answers: a get of its key, or a table read (getEach) once its last missing key
    // is there. With one condition for every key, each of a job's n ranks putting its address woke every rank still
    // reading the table: n² wake-ups at start (docs/scaling.md).
    /** The gets waiting for each key not put yet. */
    private final Map<String, Waiters> waiting = new HashMap<>();
    /** The table reads waiting, by prefix and count (every rank reads the same table, so there are few). */
    private final Map<String, TableWait> tables = new HashMap<>();
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
            if (values.put(key, value) == null) {
                arrived(key);
            }
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
            arrived(key);
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
                    remaining = await(key, remaining);
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
        lock.lock();
        try {
            int missing = firstMissing(prefix, count);
            if (missing < count) {
                String id = prefix + '\0' + count;
                TableWait table = tables.computeIfAbsent(id, k -> new TableWait(prefix, count, lock.newCondition(),
                        missingKeys(prefix, count)));
                table.waiters++;
                try {
                    while (table.missing > 0) {
                        checkOpen();
                        if (remaining <= 0) {
                            throw new KoloTimeoutException("timed out after " + Durations.describe(timeout)
                                    + " waiting for key '" + prefix + firstMissing(prefix, count)
                                    + "' in the rendezvous store");
                        }
                        try {
                            remaining = table.complete.awaitNanos(remaining);
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                            throw new KoloTimeoutException("interrupted while waiting for key '" + prefix
                                    + firstMissing(prefix, count) + "' in the rendezvous store");
                        }
                    }
                } finally {
                    if (--table.waiters == 0) {
                        tables.remove(id);
                    }
                }
            }
            List<String> found = new ArrayList<>(count);
            for (int i = 0; i < count; i++) {
                found.add(values.get(prefix + i));
            }
            return found;
        } finally {
            lock.unlock();
        }
    }

    private int firstMissing(String prefix, int count) {
        int i = 0;
        while (i < count && values.containsKey(prefix + i)) {
            i++;
        }
        return i;
    }

    private int missingKeys(String prefix, int count) {
        int missing = 0;
        for (int i = 0; i < count; i++) {
            if (!values.containsKey(prefix + i)) {
                missing++;
            }
        }
        return missing;
    }

    /** Wakes every waiting {@link #get}, which then fails; later puts fail too. Idempotent. */
    @Override
    public void close() {
        lock.lock();
        try {
            closed = true;
            for (Waiters w : waiting.values()) {
                w.arrived.signalAll();
            }
            for (TableWait t : tables.values()) {
                t.complete.signalAll();
            }
        } finally {
            lock.unlock();
        }
    }

    /** Waits, holding {@link #lock}, until {@code key} is put, the store closes, or {@code nanos} pass. */
    private long await(String key, long nanos) throws InterruptedException {
        Waiters w = waiting.computeIfAbsent(key, k -> new Waiters(lock.newCondition()));
        w.count++;
        try {
            return w.arrived.awaitNanos(nanos);
        } finally {
            if (--w.count == 0) {
                waiting.remove(key);
            }
        }
    }

    /** A key was put for the first time: wakes its gets, and the table reads it completes. */
    private void arrived(String key) {
        Waiters w = waiting.get(key);
        if (w != null) {
            w.arrived.signalAll();
        }
        for (TableWait t : tables.values()) {
            if (t.holds(key) && --t.missing == 0) {
                t.complete.signalAll();
            }
        }
    }

    /** The table reads of one prefix and count, and how many of its keys are still missing; guarded by {@link #lock}. */
    private static final class TableWait {
        final String prefix;
        final int count;
        final Condition complete;
        int missing;
        int waiters;

        TableWait(String prefix, int count, Condition complete, int missing) {
            this.prefix = prefix;
            this.count = count;
            this.complete = complete;
            this.missing = missing;
        }

        /** Whether {@code key} is {@code prefix + i} for an {@code i} of the table, written as a plain number. */
        boolean holds(String key) {
            if (!key.startsWith(prefix) || key.length() == prefix.length()
                    || key.length() - prefix.length() > 10) {
                return false;
            }
            String index = key.substring(prefix.length());
            for (int i = 0; i < index.length(); i++) {
                if (index.charAt(i) < '0' || index.charAt(i) > '9') {
                    return false;
                }
            }
            long i = Long.parseLong(index);
            return i < count && index.equals(Long.toString(i));
        }
    }

    /** The requests waiting for one key; guarded by {@link #lock}. */
    private static final class Waiters {
        final Condition arrived;
        int count;

        Waiters(Condition arrived) {
            this.arrived = arrived;
        }
    }

    private void checkOpen() {
        if (closed) {
            throw new IllegalStateException("the in-memory rendezvous store is closed");
        }
    }
}
