package io.kolo.bootstrap;

import java.util.Comparator;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * The rendezvous server's GET and GET_EACH requests whose keys are missing: their deadlines, and the connections the
 * store called back because their keys came. Owned by the serving thread, except {@link #wake}, which the store calls
 * from whichever thread wrote the keys.
 */
final class ParkedRequests {
    /** A wait longer than this (about 290 years) is as good as forever, and keeps deadlines far from overflowing. */
    private static final long FOREVER_MS = Long.MAX_VALUE / 4 / 1_000_000;

    /** Parked requests by deadline (then by arrival, so that equal deadlines stay apart). */
    private final TreeSet<Parked> deadlines = new TreeSet<>(
            Comparator.<Parked>comparingLong(p -> p.deadline).thenComparingLong(p -> p.sequence));
    private long parkedSoFar;
    /** Connections whose parked request the store called back; handed from the writing thread to the serving one. */
    private final ConcurrentLinkedQueue<StoreConnection> woken = new ConcurrentLinkedQueue<>();
    /** The server's clock, which its other deadlines share. */
    private final LongSupplier now;
    /** Wakes the serving thread out of select, so that a woken connection is served at once. */
    private final Runnable wakeServer;

    ParkedRequests(LongSupplier now, Runnable wakeServer) {
        this.now = now;
        this.wakeServer = wakeServer;
    }

    /** A request of {@code connection}'s, with its deadline from now; it waits only once {@link #waiting}. */
    Parked park(StoreConnection connection, RendezvousProtocol.Request request) {
        // Capped far beyond any job's life: a client may ask to wait "forever".
        long nanos = request.timeoutMs() >= FOREVER_MS ? FOREVER_MS * 1_000_000 : request.timeoutMs() * 1_000_000;
        return new Parked(connection, request, now.getAsLong() + nanos, parkedSoFar++);
    }

    /**
     * {@code parked} waits, in the store through the wait {@code register} makes, until its keys come or its deadline
     * passes. Its earlier wait, if any, is cancelled first, so that the store calls back once per registration.
     */
    void waiting(Parked parked, Supplier<InMemoryStore.Wait> register) {
        parked.wait.cancel();
        parked.wait = register.get();
        deadlines.add(parked);
    }

    /** {@code parked} was answered or its connection closed: it waits no more. */
    void done(Parked parked) {
        parked.wait.cancel();
        deadlines.remove(parked);
    }

    /** The store has the keys {@code connection} waits for. Any thread. */
    void wake(StoreConnection connection) {
        woken.add(connection);
        wakeServer.run();
    }

    /** Retries the requests of the connections the store woke since the last call. */
    void retryWoken() {
        for (StoreConnection c; (c = woken.poll()) != null; ) {
            try {
                c.retryParked();
            } catch (RuntimeException | Error e) {
                c.failed(e);
            }
        }
    }

    /** Answers every request whose deadline has passed by {@code now}, with what the store has then. */
    void expire(long now) {
        for (Parked p; !deadlines.isEmpty() && now >= (p = deadlines.first()).deadline; ) {
            deadlines.pollFirst();
            if (p.connection.isParked(p)) {
                try {
                    p.connection.answerParked(true);
                } catch (RuntimeException | Error e) {
                    p.connection.failed(e);
                }
            }
        }
    }

    /** The earliest deadline of a parked request, {@link Long#MAX_VALUE} if none waits. */
    long nextDeadline() {
        return deadlines.isEmpty() ? Long.MAX_VALUE : deadlines.first().deadline;
    }

    /** A GET or GET_EACH waiting in the store for its keys, until {@link #deadline} (the server's clock). */
    static final class Parked {
        final StoreConnection connection;
        final RendezvousProtocol.Request request;
        final long deadline;
        final long sequence;
        private InMemoryStore.Wait wait = InMemoryStore.Wait.NONE;

        private Parked(StoreConnection connection, RendezvousProtocol.Request request, long deadline, long sequence) {
            this.connection = connection;
            this.request = request;
            this.deadline = deadline;
            this.sequence = sequence;
        }
    }
}
