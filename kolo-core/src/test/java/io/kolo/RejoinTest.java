package io.kolo;

import io.kolo.bootstrap.ElasticGeneration;
import io.kolo.bootstrap.RendezvousServer;
import io.kolo.launch.JobSecret;
import io.kolo.transport.Transports;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The engine's life cycle as an elastic job needs it: a rank that saw a peer fail leaves its communicator promptly
 * (no hang, its sockets and shared-memory segments released) and joins the launcher's next job in the same process,
 * through the same store, under the next generation.
 */
@Timeout(120)
class RejoinTest {
    private static final JobSecret SECRET = JobSecret.generate();

    @Test
    void ranksThatSawAFailureLeaveCleanlyAndJoinTheNextJob() throws Exception {
        for (String transport : List.of("auto", "tcp")) {
            try (RendezvousServer store = RendezvousServer.start(InetAddress.getLoopbackAddress(), 0, SECRET)) {
                run(store, transport);
            }
        }
    }

    private static void run(RendezvousServer store, String transport) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(3);
        try {
            Future<?> lost = pool.submit(() -> {
                Communicator c = Communicator.fromEnvironment(env(store, transport, 0, 2, 3));
                float[] x = {1, 1, 1};
                for (int step = 0; step < 5; step++) {
                    c.allreduce(x, ReduceOp.SUM);
                }
                c.simulateExit();   // as a SIGKILLed process: its connections drop without a word
                c.close();
                return null;
            });
            List<Future<float[]>> survivors = Stream.of(0, 1).map(r -> pool.submit(() -> survive(store, transport, r)))
                    .toList();
            lost.get(60, TimeUnit.SECONDS);
            // Both outcomes first: one survivor failing makes the other time out, and the first failure is the cause.
            List<Object> outcomes = new ArrayList<>();
            for (Future<float[]> survivor : survivors) {
                try {
                    outcomes.add(survivor.get(90, TimeUnit.SECONDS));
                } catch (ExecutionException e) {
                    outcomes.add(e.getCause());
                }
            }
            for (int r = 0; r < 2; r++) {
                if (!(outcomes.get(r) instanceof float[] result)) {
                    throw new AssertionError(transport + ": survivors ended with " + outcomes, (Throwable) outcomes.get(r));
                }
                assertArrayEquals(new float[]{2, 2, 2}, result, "rank " + r);
            }
        } finally {
            pool.shutdownNow();
        }
        for (int generation = 0; generation < 2; generation++) {
            String tag = Transports.jobTag(ElasticGeneration.secret(SECRET, generation));
            assertEquals(List.of(), segments(tag), transport + ": generation " + generation + " left segments behind");
        }
    }

    /** Reduces until the lost rank's failure arrives, leaves, then joins generation 1 of size 2 and reduces there. */
    private static float[] survive(RendezvousServer store, String transport, int rank) {
        Communicator first = Communicator.fromEnvironment(env(store, transport, 0, rank, 3));
        RuntimeException failure = null;
        float[] x = {1, 1, 1};
        for (int step = 0; step < 10_000 && failure == null; step++) {
            try {
                x[0] = 1;
                first.allreduce(x, ReduceOp.SUM);
            } catch (RuntimeException e) {
                failure = e;
            }
        }
        assertInstanceOf(RankFailedException.class, failure, "rank " + rank);
        // Which rank is named depends on who saw it first: without a launcher to record the exit, a survivor that
        // aborted on seeing it can be named instead (kolo-launcher's ElasticRunTest checks the cause named there).
        assertTrue(((RankFailedException) failure).failedRank() != rank, failure.getMessage());
        long start = System.nanoTime();
        first.close();
        long closeMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        // Far below any timeout: close must not wait on the peer that is gone.
        assertTrue(closeMillis < 5_000, "close took " + closeMillis + " ms");
        try (Communicator second = Communicator.fromEnvironment(env(store, transport, 1, rank, 2))) {
            assertEquals(rank, second.rank());
            assertEquals(2, second.size());
            float[] y = {1, 1, 1};
            second.allreduce(y, ReduceOp.SUM);
            return y;
        }
    }

    private static Map<String, String> env(RendezvousServer store, String transport, int generation, int rank,
                                           int size) {
        Map<String, String> env = new HashMap<>();
        env.put("KOLO_RANK", Integer.toString(rank));
        env.put("KOLO_SIZE", Integer.toString(size));
        env.put("KOLO_RENDEZVOUS_ADDR", "127.0.0.1");
        env.put("KOLO_RENDEZVOUS_PORT", Integer.toString(store.address().getPort()));
        env.put("KOLO_RENDEZVOUS_SERVER", "launcher");
        env.put("KOLO_SECRET", SECRET.toHex());
        env.put("KOLO_ELASTIC_GENERATION", Integer.toString(generation));
        env.put("KOLO_TRANSPORT", transport);
        env.put("KOLO_START_TIMEOUT_SECONDS", "30");
        env.put("KOLO_TIMEOUT_SECONDS", "30");
        return env;
    }

    private static List<Path> segments(String tag) throws IOException {
        Path shm = Path.of("/dev/shm");
        if (!Files.isDirectory(shm)) {
            return List.of();
        }
        try (Stream<Path> files = Files.list(shm)) {
            return files.filter(p -> p.getFileName().toString().startsWith("kolo-" + tag)).toList();
        }
    }
}
