package io.kolo.transport;

import io.kolo.bootstrap.InMemoryStore;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.function.IntFunction;
import java.util.stream.IntStream;

/**
 * Builds {@code n} {@link ShmTransport}s as threads of this JVM, each mapping the others' real files in
 * {@code /dev/shm} exactly as separate processes would (only the pid liveness check cannot fire here).
 */
public final class ShmGroup {
    private ShmGroup() {
    }

    /** A fresh job tag, so groups of concurrent tests never see each other's files. */
    public static String newJob() {
        byte[] b = new byte[6];
        ThreadLocalRandom.current().nextBytes(b);
        return "t" + HexFormat.of().formatHex(b);
    }

    public static List<Transport> open(int n, long ringBytes, Duration timeout) {
        return open(n, newJob(), ringBytes, timeout);
    }

    public static List<Transport> open(int n, String job, long ringBytes, Duration timeout) {
        return open(ShmTransport.DIR, n, job, ringBytes, timeout);
    }

    /** Ranks whose segments live in {@code dir} instead of /dev/shm. */
    static List<Transport> open(java.nio.file.Path dir, int n, String job, long ringBytes, Duration timeout) {
        InMemoryStore store = new InMemoryStore();
        int[] all = IntStream.range(0, n).toArray();
        return connectAll(n, rank -> ShmTransport.connect(dir, rank, n, all, store, job, ringBytes,
                Duration.ofSeconds(20), timeout));
    }

    /**
     * Connects {@code n} ranks at once, one platform thread each (connecting blocks until all have come), and
     * closes the ones that did connect when any rank fails.
     */
    public static List<Transport> connectAll(int n, IntFunction<Transport> connect) {
        AtomicReferenceArray<Object> made = new AtomicReferenceArray<>(n);
        List<Thread> threads = new ArrayList<>();
        for (int r = 0; r < n; r++) {
            int rank = r;
            threads.add(Thread.ofPlatform().start(() -> {
                try {
                    made.set(rank, connect.apply(rank));
                } catch (Throwable e) {
                    made.set(rank, e);
                }
            }));
        }
        List<Transport> out = new ArrayList<>();
        for (int r = 0; r < n; r++) {
            try {
                threads.get(r).join();
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
        }
        for (int r = 0; r < n; r++) {
            if (made.get(r) instanceof Throwable e) {
                for (int q = 0; q < n; q++) {
                    if (made.get(q) instanceof Transport t) {
                        t.close();
                    }
                }
                throw new AssertionError("rank " + r + " could not connect: " + e, e);
            }
            out.add((Transport) made.get(r));
        }
        return List.copyOf(out);
    }
}
