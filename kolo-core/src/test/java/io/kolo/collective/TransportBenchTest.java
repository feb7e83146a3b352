package io.kolo.collective;

import io.kolo.DataType;
import io.kolo.transport.ShmGroup;
import io.kolo.transport.ShmTransport;
import io.kolo.transport.Transport;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.Function;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Transport-only timings (ping-pong latency, 2-rank exchange and allreduce bandwidth) for shared memory and TCP, ranks
 * as threads of this JVM. Prints figures and asserts nothing about them; runs only with {@code -Dkolo.bench=true}:
 * {@code -Dkolo.ringBytes=N} sets the ring size, {@code -Dkolo.bench.tcp=false} skips TCP.
 * <pre>./mvnw -o -q -pl kolo-core -am test -Dtest=TransportBenchTest -Dsurefire.failIfNoSpecifiedTests=false -Dkolo.bench=true</pre>
 */
class TransportBenchTest {

    @Test
    void printTimings() {
        assumeTrue(Boolean.getBoolean("kolo.bench"), "timings run only with -Dkolo.bench=true");
        assumeTrue(io.kolo.transport.ShmSegments.available(), "no writable /dev/shm");
        Duration timeout = Duration.ofSeconds(60);
        measure("shm", () -> ShmGroup.open(2, Long.getLong("kolo.ringBytes", ShmTransport.DEFAULT_RING_BYTES), timeout));
        if (Boolean.parseBoolean(System.getProperty("kolo.bench.tcp", "true"))) {
            measure("tcp", () -> TransportEquivalenceTest.tcp(2));
        }
    }

    interface Maker {
        List<Transport> make();
    }

    private static void measure(String name, Maker maker) {
        List<Transport> t = maker.make();
        try {
            for (long bytes : new long[] {32, 1024, 65536, 1 << 20, 4 << 20, 64 << 20}) {
                // A small message's time is a fraction of a microsecond: enough iterations that the JIT has compiled
                // the path in the warm-up run and the clock's cost disappears in the total.
                int iters = bytes < 1024 ? 1_000_000 : (int) Math.max(20, Math.min(5000, (256L << 20) / bytes));
                double pp = time(t, iters, (tr) -> pingPong(tr, bytes, iters)) / iters / 2;
                double ex = time(t, iters, (tr) -> exchange(tr, bytes, iters)) / iters;
                double ar = time(t, iters, (tr) -> allreduce(tr, bytes, iters)) / iters;
                System.out.printf(Locale.ROOT, "%s %9d B: one-way %8.2f us (%6.2f GB/s)  exchange %8.2f us (%6.2f GB/s"
                                + " each way)  allreduce f32 %8.2f us (busbw %6.2f GB/s)%n", name, bytes, pp / 1e3,
                        bytes / pp, ex / 1e3, bytes / ex, ar / 1e3, bytes / ar);
            }
        } finally {
            t.forEach(Transport::close);
        }
    }

    /** Runs body on both ranks (after one warm-up run) and returns rank 0's nanoseconds. */
    private static double time(List<Transport> t, int iters, Function<Transport, Long> body) {
        body(t, body);
        return body(t, body);
    }

    private static double body(List<Transport> t, Function<Transport, Long> body) {
        long[] ns = new long[2];
        List<Thread> threads = new ArrayList<>();
        for (int r = 0; r < 2; r++) {
            int rank = r;
            threads.add(Thread.ofPlatform().start(() -> ns[rank] = body.apply(t.get(rank))));
        }
        for (Thread th : threads) {
            try {
                th.join();
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
        }
        return ns[0];
    }

    private static long pingPong(Transport t, long bytes, int iters) {
        try (Arena arena = Arena.ofShared()) {
            MemorySegment buf = arena.allocate(bytes);
            long start = System.nanoTime();
            for (int i = 0; i < iters; i++) {
                if (t.rank() == 0) {
                    t.send(1, buf, 0, bytes);
                    t.recv(1, buf, 0, bytes);
                } else {
                    t.recv(0, buf, 0, bytes);
                    t.send(0, buf, 0, bytes);
                }
            }
            return System.nanoTime() - start;
        }
    }

    private static long exchange(Transport t, long bytes, int iters) {
        try (Arena arena = Arena.ofShared()) {
            MemorySegment src = arena.allocate(bytes);
            MemorySegment dst = arena.allocate(bytes);
            int peer = 1 - t.rank();
            long start = System.nanoTime();
            for (int i = 0; i < iters; i++) {
                t.sendRecv(peer, src, 0, bytes, peer, dst, 0, bytes);
            }
            return System.nanoTime() - start;
        }
    }

    private static long allreduce(Transport t, long bytes, int iters) {
        try (Arena arena = Arena.ofShared(); FlatCollectives c = new FlatCollectives(t)) {
            MemorySegment buf = arena.allocate(bytes);
            long start = System.nanoTime();
            for (int i = 0; i < iters; i++) {
                c.allreduce(buf, bytes / 4, DataType.FLOAT32, Reduction.SUM);
            }
            return System.nanoTime() - start;
        }
    }
}
