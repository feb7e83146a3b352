package io.kolo.collective;

import io.kolo.transport.LocalTransport;
import io.kolo.transport.PeerFailedException;
import io.kolo.transport.Transport;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReferenceArray;

/** Runs one body per rank on its own thread over a {@link LocalTransport} group and collects the results. */
final class Ranks {

    @FunctionalInterface
    interface Body<T> {
        T run(FlatCollectives c) throws Exception;
    }

    private Ranks() {
    }

    static <T> List<T> run(int n, Body<T> body) {
        return run(n, FlatCollectives.DEFAULT_SMALL_MESSAGE_BYTES, FlatCollectives.DEFAULT_RING_CHUNK_BYTES,
                FlatCollectives.DEFAULT_BROADCAST_CHUNK_BYTES, body);
    }

    static <T> List<T> run(int n, long smallMessageBytes, long ringChunk, long broadcastChunk, Body<T> body) {
        return runOps(n, t -> new FlatCollectives(t, smallMessageBytes, ringChunk, broadcastChunk),
                c -> body.run((FlatCollectives) c));
    }

    @FunctionalInterface
    interface OpsBody<T> {
        T run(CollectiveOps c) throws Exception;
    }

    /** Like {@link #run} with collectives of any kind built over each rank's transport. */
    static <T> List<T> runOps(int n, java.util.function.Function<Transport, CollectiveOps> factory, OpsBody<T> body) {
        List<Transport> transports = LocalTransport.group(n, Duration.ofSeconds(20));
        AtomicReferenceArray<T> results = new AtomicReferenceArray<>(n);
        AtomicReferenceArray<Throwable> failures = new AtomicReferenceArray<>(n);
        List<Thread> threads = new ArrayList<>();
        for (int r = 0; r < n; r++) {
            int rank = r;
            Thread t = new Thread(() -> {
                Transport transport = transports.get(rank);
                try (CollectiveOps c = factory.apply(transport)) {
                    results.set(rank, body.run(c));
                } catch (Throwable e) {
                    failures.set(rank, e);
                    // Fail the other ranks fast instead of letting them wait for the timeout.
                    transport.abort(new RuntimeException("rank " + rank + " failed in the test", e));
                }
            }, "rank-" + r);
            threads.add(t);
            t.start();
        }
        for (Thread t : threads) {
            try {
                t.join(120_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError(e);
            }
            if (t.isAlive()) {
                transports.forEach(tr -> tr.abort(new RuntimeException("test gave up")));
                throw new AssertionError(t.getName() + " did not finish");
            }
        }
        transports.forEach(Transport::close);
        Throwable first = null;
        for (int r = 0; r < n; r++) {
            Throwable f = failures.get(r);
            if (f != null && (first == null || first instanceof PeerFailedException)) {
                first = f;
            }
        }
        if (first != null) {
            throw new AssertionError("a rank failed: " + first, first);
        }
        List<T> out = new ArrayList<>(n);
        for (int r = 0; r < n; r++) {
            out.add(results.get(r));
        }
        return out;
    }
}
