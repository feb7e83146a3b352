package io.kolo.collective;

import io.kolo.DataType;
import io.kolo.bootstrap.InMemoryStore;
import io.kolo.launch.JobSecret;
import io.kolo.transport.HostRoutingTransport;
import io.kolo.transport.LocalTransport;
import io.kolo.transport.ShmGroup;
import io.kolo.transport.ShmTransport;
import io.kolo.transport.TcpTransport;
import io.kolo.transport.Transport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.ByteArrayOutputStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicReferenceArray;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Every collective over shared memory, over TCP and across hosts (shared memory inside, TCP between) gives the same
 * bytes as over the in-JVM transport, whose results the other collective tests check value by value.
 */
class TransportEquivalenceTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(60);

    /** Runs each collective once on seeded data and returns everything every call produced, concatenated. */
    static byte[] script(FlatCollectives c) {
        int n = c.size();
        int r = c.rank();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (Arena arena = Arena.ofShared()) {
            // Ring (large) and recursive doubling (small) allreduce, float and integer, several ops.
            for (long count : new long[] {(1 << 20) + 3, 1000, 1}) {
                MemorySegment f = random(arena, count * 4, r * 7 + count);
                for (long i = 0; i < count; i++) {
                    f.setAtIndex(ValueLayout.JAVA_FLOAT, i, f.getAtIndex(ValueLayout.JAVA_INT, i) / 1e6f);
                }
                c.allreduce(f, count, DataType.FLOAT32, Reduction.SUM);
                append(out, f);
            }
            MemorySegment d = random(arena, 5003 * 8, r + 11);
            for (long i = 0; i < 5003; i++) {
                d.setAtIndex(ValueLayout.JAVA_DOUBLE, i, d.getAtIndex(ValueLayout.JAVA_LONG, i) * 1e-12);
            }
            c.allreduce(d, 5003, DataType.FLOAT64, Reduction.SUM);
            append(out, d);
            MemorySegment ints = random(arena, 300_001L * 4, r + 99);
            c.allreduce(ints, 300_001, DataType.INT32, Reduction.MAX);
            append(out, ints);

            long[] blocks = new long[n];
            SplittableRandom sizes = new SplittableRandom(n);
            for (int b = 0; b < n; b++) {
                blocks[b] = sizes.nextInt(0, 700_000);
            }
            long total = Arrays.stream(blocks).sum();
            MemorySegment g = random(arena, total, r + 5);
            c.allgatherv(g, blocks);
            append(out, g);

            MemorySegment bc = random(arena, (3 << 20) + 1, r + 17);
            c.broadcast(bc, bc.byteSize(), n - 1);
            append(out, bc);

            long[] send = new long[n];
            long[] recv = new long[n];
            for (int p = 0; p < n; p++) {
                send[p] = 1000L * (r + 1) + 37L * p;
                recv[p] = 1000L * (p + 1) + 37L * r;
            }
            MemorySegment a = random(arena, Arrays.stream(send).sum(), r + 23);
            MemorySegment b = arena.allocate(Arrays.stream(recv).sum());
            c.alltoallv(a, send, b, recv);
            append(out, b);

            long[] counts = new long[n];
            for (int p = 0; p < n; p++) {
                counts[p] = 100_000 + 13L * p;
            }
            long elems = Arrays.stream(counts).sum();
            MemorySegment rs = random(arena, elems * 4, r + 31);
            for (long i = 0; i < elems; i++) {
                rs.setAtIndex(ValueLayout.JAVA_FLOAT, i, rs.getAtIndex(ValueLayout.JAVA_SHORT, i));
            }
            c.reducescatter(rs, counts, DataType.FLOAT32, Reduction.SUM);
            append(out, rs);

            c.barrier();
            byte[][] gathered = c.gather(new byte[] {(byte) r, (byte) (r * 3)}, 0);
            if (gathered != null) {
                for (byte[] x : gathered) {
                    out.writeBytes(x);
                }
            }
            out.writeBytes(c.broadcast(new byte[] {(byte) (40 + r)}, n / 2));
        }
        return out.toByteArray();
    }

    static MemorySegment random(Arena arena, long bytes, long seed) {
        MemorySegment s = arena.allocate(Math.max(8, bytes), 8);
        SplittableRandom rnd = new SplittableRandom(seed);
        for (long i = 0; i + 8 <= bytes; i += 8) {
            s.set(ValueLayout.JAVA_LONG_UNALIGNED, i, rnd.nextLong());
        }
        for (long i = bytes & ~7L; i < bytes; i++) {
            s.set(ValueLayout.JAVA_BYTE, i, (byte) rnd.nextInt());
        }
        return s.asSlice(0, bytes);
    }

    static void append(ByteArrayOutputStream out, MemorySegment s) {
        out.writeBytes(s.toArray(ValueLayout.JAVA_BYTE));
    }

    /** Runs the script on every rank of {@code transports}; closes them. */
    static List<byte[]> run(List<Transport> transports) {
        int n = transports.size();
        AtomicReferenceArray<Object> results = new AtomicReferenceArray<>(n);
        List<Thread> threads = new ArrayList<>();
        for (int r = 0; r < n; r++) {
            int rank = r;
            threads.add(Thread.ofPlatform().name("rank-" + r).start(() -> {
                Transport t = transports.get(rank);
                try (FlatCollectives c = new FlatCollectives(t)) {
                    results.set(rank, script(c));
                } catch (Throwable e) {
                    results.set(rank, e);
                    t.abort(new RuntimeException("rank " + rank + " failed in the test", e));
                }
            }));
        }
        try {
            for (Thread t : threads) {
                t.join(180_000);
                if (t.isAlive()) {
                    transports.forEach(x -> x.abort(new RuntimeException("test gave up")));
                    throw new AssertionError(t.getName() + " did not finish");
                }
            }
        } catch (InterruptedException e) {
            throw new AssertionError(e);
        } finally {
            transports.forEach(Transport::close);
        }
        List<byte[]> out = new ArrayList<>();
        for (int r = 0; r < n; r++) {
            if (results.get(r) instanceof Throwable e) {
                throw new AssertionError("rank " + r + " failed: " + e, e);
            }
            out.add((byte[]) results.get(r));
        }
        return out;
    }

    static List<Transport> tcp(int n) {
        InMemoryStore store = new InMemoryStore();
        JobSecret secret = JobSecret.generate();
        return ShmGroup.connectAll(n, r -> TcpTransport.connect(r, n, InetAddress.getLoopbackAddress(), store, secret,
                Duration.ofSeconds(30), TIMEOUT));
    }

    /** Two "hosts" (lower and upper half of the ranks), shared memory inside each, TCP between. */
    static List<Transport> twoHosts(int n) {
        InMemoryStore store = new InMemoryStore();
        JobSecret secret = JobSecret.generate();
        String job = ShmGroup.newJob();
        int half = n / 2;
        return ShmGroup.connectAll(n, r -> {
            int[] host = r < half ? range(0, half) : range(half, n);
            ShmTransport shm = ShmTransport.connect(r, n, host, store, job, 65536, Duration.ofSeconds(30), TIMEOUT);
            return new HostRoutingTransport(shm, TcpTransport.connect(r, n, InetAddress.getLoopbackAddress(), store,
                    secret, Duration.ofSeconds(30), TIMEOUT));
        });
    }

    static int[] range(int from, int to) {
        return java.util.stream.IntStream.range(from, to).toArray();
    }

    static void assertSame(List<byte[]> expected, List<byte[]> actual, String what) {
        for (int r = 0; r < expected.size(); r++) {
            assertArrayEquals(expected.get(r), actual.get(r), what + ": rank " + r + " differs");
        }
    }

    @ParameterizedTest(name = "n={0}")
    @ValueSource(ints = {2, 3, 4, 5, 8})
    void sharedMemoryMatchesInJvmTransportBitForBit(int n) {
        assumeTrue(io.kolo.transport.ShmSegments.available(), "no writable /dev/shm");
        List<byte[]> local = run(LocalTransport.group(n, TIMEOUT));
        // 64 KiB rings: every large message streams through its ring many times over.
        assertSame(local, run(ShmGroup.open(n, 65536, TIMEOUT)), "shm");
    }

    @ParameterizedTest(name = "n={0}")
    @ValueSource(ints = {3, 4})
    void tcpAndSharedMemoryGiveIdenticalBytes(int n) {
        assumeTrue(io.kolo.transport.ShmSegments.available(), "no writable /dev/shm");
        assertSame(run(tcp(n)), run(ShmGroup.open(n, ShmTransport.DEFAULT_RING_BYTES, TIMEOUT)), "tcp vs shm");
    }

    @Test
    void twoHostsMixSharedMemoryAndTcp() {
        assumeTrue(io.kolo.transport.ShmSegments.available(), "no writable /dev/shm");
        assertSame(run(LocalTransport.group(4, TIMEOUT)), run(twoHosts(4)), "shm+tcp");
    }
}
