package io.kolo.bootstrap;

import io.kolo.KoloTimeoutException;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A {@link KeyValueStore} held in this JVM's memory, for groups whose ranks are threads of one process
 * (and for tests). Thread-safe; {@link #get} blocks until the key is put or the timeout passes. A server that serves
 * the store to many connections from one thread waits without blocking instead: {@link #whenPresent} and
 * {@link #whenEachPresent} call it back when a request it parked can be answered.
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
    /**
     * Tables read whole, by prefix and count, the same list until one of their keys gets a new value: each of a job's
     * n ranks reads the same table, and n reads of n keys each were n² lookups at start (docs/scaling.md).
     */
    private final Map<String, List<String>> complete = new HashMap<>();
    /** More tables than any job reads at once (elastic generations each read their own): beyond, the cache starts over. */
    private static final int MAX_COMPLETE_TABLES = 64;
    private boolean closed;

    /** An empty store. */
    public InMemoryStore() {
    }

    @Override
    public void put(String key, String value) {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(value, "value");
        List<Runnable> ready = new ArrayList<>();
        lock.lock();
        try {
            checkOpen();
            String old = values.put(key, value);
            if (old == null) {
                arrived(key, ready);
            } else if (!old.equals(value)) {
                // A complete table holds only keys present, so only a changed value (an elastic generation writing
                // its keys again) makes one stale.
                complete.keySet().removeIf(table -> key.startsWith(table.substring(0, table.lastIndexOf('\0'))));
            }
        } finally {
            lock.unlock();
        }
        ready.forEach(Runnable::run);
    }

    @Override
    public boolean putIfAbsent(String key, String value) {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(value, "value");
        List<Runnable> ready = new ArrayList<>();
        lock.lock();
        try {
            checkOpen();
            if (values.putIfAbsent(key, value) != null) {
                return false;
            }
            arrived(key, ready);
        } finally {
            lock.unlock();
        }
        ready.forEach(Runnable::run);
        return true;
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
                TableWait table = table(prefix, count);
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
                    table.waiters--;
                    forgetIfIdle(table);
                }
            }
            return completeTable(prefix, count);
        } finally {
            lock.unlock();
        }
    }

    /**
     * Every value of a table whose keys are all present, unmodifiable; the same list for every reader until one of
     * its values changes, so that the server can encode it once ({@link RendezvousServer}). Called holding the lock.
     */
    private List<String> completeTable(String prefix, int count) {
        String table = tableKey(prefix, count);
        List<String> found = complete.get(table);
        if (found == null) {
            String[] each = new String[count];
            for (int i = 0; i < count; i++) {
                each[i] = values.get(prefix + i);
            }
            found = List.of(each);
            if (complete.size() >= MAX_COMPLETE_TABLES) {
                complete.clear();
            }
            complete.put(table, found);
        }
        return found;
    }

    private static String tableKey(String prefix, int count) {
        return prefix + '\0' + count;
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

    /** Every value {@code prefix + i} for {@code i} below {@code count}, in order, if all are present now. */
    Optional<List<String>> tryGetEach(String prefix, int count) {
        lock.lock();
        try {
            List<String> cached = complete.get(tableKey(prefix, count));
            if (cached != null) {
                return Optional.of(cached);
            }
            if (firstMissing(prefix, count) < count) {
                return Optional.empty();
            }
            return Optional.of(completeTable(prefix, count));
        } finally {
            lock.unlock();
        }
    }

    /** The first {@code i} below {@code count} whose key {@code prefix + i} is missing now, or {@code count}. */
    int firstMissingNow(String prefix, int count) {
        lock.lock();
        try {
            return firstMissing(prefix, count);
        } finally {
            lock.unlock();
        }
    }

    /** Whether {@link #close()} was called. */
    boolean isClosed() {
        lock.lock();
        try {
            return closed;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Calls {@code ready} once, when {@code key} is put or the store closes, on the thread that put it or closed the
     * store (so it must only hand the news on); at once, on this thread, if either has happened already. The caller
     * then reads the key again. Every parked request has its own deadline: cancel the wait when it passes, or the
     * store keeps it until the key comes.
     */
    Wait whenPresent(String key, Runnable ready) {
        Objects.requireNonNull(key, "key");
        lock.lock();
        try {
            if (!closed && !values.containsKey(key)) {
                Waiters w = waiting.computeIfAbsent(key, k -> new Waiters(lock.newCondition()));
                Listener l = new Listener(ready, () -> {
                    if (w.count == 0 && w.listeners.isEmpty()) {
                        waiting.remove(key, w);
                    }
                });
                w.listeners.add(l);
                l.in = w.listeners;
                return l;
            }
        } finally {
            lock.unlock();
        }
        ready.run();
        return Wait.NONE;
    }

    /** As {@link #whenPresent}, for every key {@code prefix + i} with {@code i} below {@code count}, as {@link #getEach}. */
    Wait whenEachPresent(String prefix, int count, Runnable ready) {
        Objects.requireNonNull(prefix, "prefix");
        lock.lock();
        try {
            if (!closed && firstMissing(prefix, count) < count) {
                TableWait table = table(prefix, count);
                Listener l = new Listener(ready, () -> forgetIfIdle(table));
                table.listeners.add(l);
                l.in = table.listeners;
                return l;
            }
        } finally {
            lock.unlock();
        }
        ready.run();
        return Wait.NONE;
    }

    /** A request parked with {@link #whenPresent} or {@link #whenEachPresent}. */
    interface Wait {
        /** Forgets the request (its deadline passed, or its connection closed); nothing once it was called back. */
        void cancel();

        Wait NONE = () -> { };
    }

    /** A parked request's callback, in the set of its key or table until it is called back or cancelled. */
    private final class Listener implements Wait {
        private final Runnable ready;
        private final Runnable cleanUp;
        /** The set this listener is in; guarded by {@link #lock}. */
        private LinkedHashSet<Listener> in;

        Listener(Runnable ready, Runnable cleanUp) {
            this.ready = ready;
            this.cleanUp = cleanUp;
        }

        @Override
        public void cancel() {
            lock.lock();
            try {
                if (in != null && in.remove(this)) {
                    cleanUp.run();
                }
                in = null;
            } finally {
                lock.unlock();
            }
        }
    }

    /** Wakes every waiting {@link #get}, which then fails; later puts fail too. Idempotent. */
    @Override
    public void close() {
        List<Runnable> ready = new ArrayList<>();
        lock.lock();
        try {
            closed = true;
            for (Waiters w : waiting.values()) {
                w.arrived.signalAll();
                takeListeners(w.listeners, ready);
            }
            for (TableWait t : tables.values()) {
                t.complete.signalAll();
                takeListeners(t.listeners, ready);
            }
        } finally {
            lock.unlock();
        }
        ready.forEach(Runnable::run);
    }

    /** The table read of {@code prefix} and {@code count}, made when none is waiting; guarded by {@link #lock}. */
    private TableWait table(String prefix, int count) {
        return tables.computeIfAbsent(prefix + '\0' + count, k -> new TableWait(prefix, count, lock.newCondition(),
                missingKeys(prefix, count)));
    }

    private void forgetIfIdle(TableWait table) {
        if (table.waiters == 0 && table.listeners.isEmpty()) {
            tables.remove(table.prefix + '\0' + table.count, table);
        }
    }

    /** Moves every listener of {@code from} to {@code to}: each is called back once. */
    private static void takeListeners(LinkedHashSet<Listener> from, List<Runnable> to) {
        for (Listener l : from) {
            l.in = null;
            to.add(l.ready);
        }
        from.clear();
    }

    /** Waits, holding {@link #lock}, until {@code key} is put, the store closes, or {@code nanos} pass. */
    private long await(String key, long nanos) throws InterruptedException {
        Waiters w = waiting.computeIfAbsent(key, k -> new Waiters(lock.newCondition()));
        w.count++;
        try {
            return w.arrived.awaitNanos(nanos);
        } finally {
            if (--w.count == 0 && w.listeners.isEmpty()) {
                waiting.remove(key, w);
            }
        }
    }

    /**
     * A key was put for the first time: wakes its gets, and the table reads it completes; adds the parked requests
     * to call back to {@code ready}, which the caller runs once it let go of {@link #lock}.
     */
    private void arrived(String key, List<Runnable> ready) {
        Waiters w = waiting.get(key);
        if (w != null) {
            w.arrived.signalAll();
            takeListeners(w.listeners, ready);
            if (w.count == 0) {
                waiting.remove(key, w);
            }
        }
        List<TableWait> idle = null;
        for (TableWait t : tables.values()) {
            if (t.holds(key) && --t.missing == 0) {
                t.complete.signalAll();
                takeListeners(t.listeners, ready);
                if (t.waiters == 0) {
                    idle = idle == null ? new ArrayList<>() : idle;
                    idle.add(t);
                }
            }
        }
        if (idle != null) {
            idle.forEach(this::forgetIfIdle);
        }
    }

    /** The table reads of one prefix and count, and how many of its keys are still missing; guarded by {@link #lock}. */
    private final class TableWait {
        final String prefix;
        final int count;
        final Condition complete;
        /** The parked requests of {@link #whenEachPresent} waiting for this table. */
        final LinkedHashSet<Listener> listeners = new LinkedHashSet<>();
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
    private final class Waiters {
        final Condition arrived;
        /** The parked requests of {@link #whenPresent} waiting for this key. */
        final LinkedHashSet<Listener> listeners = new LinkedHashSet<>();
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
