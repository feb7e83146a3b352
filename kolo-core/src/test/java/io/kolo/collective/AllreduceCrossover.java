package io.kolo.collective;

import io.kolo.DataType;
import io.kolo.bootstrap.InMemoryStore;
import io.kolo.launch.JobSecret;
import io.kolo.transport.LocalTransport;
import io.kolo.transport.TcpTransport;
import io.kolo.transport.Transport;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * Measures where recursive doubling stops beating the ring, to set {@code KOLO_SMALL_ALLREDUCE_BYTES} from data
 * rather than a guess. Not a test (it asserts nothing and timings are noisy); run it by hand:
 *
 * <pre>
 * ./mvnw -o -q -pl kolo-core -am test-compile
 * java -cp kolo-core/target/classes:kolo-core/target/test-classes io.kolo.collective.AllreduceCrossover [tcp|local] [ranks...]
 * java -cp ... io.kolo.collective.AllreduceCrossover hier HOSTS PER_HOST     # flat vs hierarchical over TCP
 * </pre>
 *
 * Prints, per size, the median microseconds per float32 SUM allreduce with each algorithm over one transport,
 * all ranks as threads of this JVM (TCP over loopback).
 */
public final class AllreduceCrossover {

    private static final long[] SIZES = {256, 1 << 10, 4 << 10, 16 << 10, 32 << 10, 64 << 10, 128 << 10,
            256 << 10, 512 << 10, 1 << 20, 4 << 20};

    private AllreduceCrossover() {
    }

    public static void main(String[] args) throws Exception {
        String kind = args.length > 0 ? args[0] : "tcp";
        if (kind.equals("hier")) {
            hierarchical(args.length > 1 ? Integer.parseInt(args[1]) : 2, args.length > 2 ? Integer.parseInt(args[2]) : 2);
            return;
        }
        int[] ranks = args.length > 1 ? Arrays.stream(args, 1, args.length).mapToInt(Integer::parseInt).toArray()
                : new int[] {2, 4};
        System.out.printf("transport=%s cpus=%d%n", kind, Runtime.getRuntime().availableProcessors());
        System.out.println("ranks bytes recursive_doubling_us ring_us faster");
        for (int n : ranks) {
            for (long bytes : SIZES) {
                double rd = measure(kind, n, bytes, Long.MAX_VALUE);
                double ring = measure(kind, n, bytes, 0);
                System.out.printf("%d %d %.1f %.1f %s%n", n, bytes, rd, ring, rd <= ring ? "rd" : "ring");
            }
        }
    }

    /** Flat vs hierarchical allreduce over TCP loopback, ranks told they run {@code perHost} to a host. */
    private static void hierarchical(int hosts, int perHost) throws Exception {
        int n = hosts * perHost;
        System.out.printf("transport=tcp hosts=%d perHost=%d cpus=%d%n", hosts, perHost,
                Runtime.getRuntime().availableProcessors());
        System.out.println("bytes flat_us hierarchical_us");
        for (long bytes : SIZES) {
            double flat = measure("tcp", n, bytes, t -> new FlatCollectives(t));
            double hier = measure("tcp", n, bytes, t -> new HierarchicalCollectives(new FlatCollectives(t), t, perHost,
                    hosts, true, false));
            System.out.printf("%d %.1f %.1f%n", bytes, flat, hier);
        }
    }

    private static double measure(String kind, int n, long bytes, long threshold) throws Exception {
        return measure(kind, n, bytes, t -> new FlatCollectives(t, threshold));
    }

    /** Median microseconds per allreduce on rank 0 (every rank runs the same loop in lock step). */
    private static double measure(String kind, int n, long bytes,
                                  java.util.function.Function<Transport, CollectiveOps> factory) throws Exception {
        List<Transport> transports = transports(kind, n);
        int iterations = (int) Math.max(20, Math.min(2000, (64L << 20) / (bytes * n)));
        ExecutorService pool = Executors.newFixedThreadPool(n);
        try {
            List<Future<double[]>> futures = new ArrayList<>();
            for (Transport t : transports) {
                futures.add(pool.submit(() -> {
                    try (CollectiveOps c = factory.apply(t); Arena arena = Arena.ofShared()) {
                        MemorySegment buf = arena.allocate(bytes, 64);
                        long count = bytes / 4;
                        for (int w = 0; w < Math.max(5, iterations / 10); w++) {
                            c.allreduce(buf, count, DataType.FLOAT32, Reduction.SUM);
                        }
                        double[] us = new double[iterations];
                        for (int i = 0; i < iterations; i++) {
                            buf.fill((byte) 0);
                            long t0 = System.nanoTime();
                            c.allreduce(buf, count, DataType.FLOAT32, Reduction.SUM);
                            us[i] = (System.nanoTime() - t0) / 1e3;
                        }
                        return us;
                    }
                }));
            }
            double[] us = futures.getFirst().get();
            for (Future<double[]> f : futures) {
                f.get();
            }
            Arrays.sort(us);
            return us[us.length / 2];
        } finally {
            pool.shutdownNow();
            transports.forEach(Transport::close);
        }
    }

    private static List<Transport> transports(String kind, int n) throws Exception {
        if (kind.equals("local")) {
            return LocalTransport.group(n, Duration.ofSeconds(60));
        }
        InMemoryStore store = new InMemoryStore();
        JobSecret secret = JobSecret.generate();
        InetAddress loopback = InetAddress.ofLiteral("127.0.0.1");
        ExecutorService pool = Executors.newFixedThreadPool(n);
        try {
            List<Future<TcpTransport>> futures = new ArrayList<>();
            for (int r = 0; r < n; r++) {
                int rank = r;
                futures.add(pool.submit(() -> TcpTransport.connect(rank, n, loopback, store, secret,
                        Duration.ofSeconds(30), Duration.ofSeconds(60))));
            }
            List<Transport> out = new ArrayList<>();
            for (Future<TcpTransport> f : futures) {
                out.add(f.get());
            }
            return out;
        } finally {
            pool.shutdown();
        }
    }
}
