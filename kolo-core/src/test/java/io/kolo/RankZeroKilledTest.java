package io.kolo;

import io.kolo.launch.JobSecret;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Without a launcher rank 0 serves the job's store; SIGKILL to rank 0 takes the store with it. The other ranks must
 * still name rank 0 as the one lost. Before: over TCP an abort carries no reason, so a third rank that saw rank 1 give
 * up (its connections closing) before it saw rank 0 go, and found no store to ask, named rank 1, which was alive.
 */
@Timeout(120)
class RankZeroKilledTest {
    private static final int SIZE = 3;

    /** Allreduces until it fails; prints "ready" after its first op and "lost rank N" for the rank it was told died. */
    public static final class Main {
        public static void main(String[] args) {
            try (Communicator comm = Communicator.fromEnvironment()) {
                float[] x = new float[4096];
                comm.allreduce(x, ReduceOp.SUM);
                System.out.println("ready");
                while (true) {
                    comm.allreduce(x, ReduceOp.SUM);
                }
            } catch (RankFailedException e) {
                System.out.println("lost rank " + e.failedRank() + ": " + e.getMessage());
                System.exit(3);
            }
        }
    }

    @Test
    void theOtherRanksNameRankZeroWhenItIsKilledWithItsStore() throws Exception {
        // A race between seeing rank 0 go and seeing another survivor give up: a few rounds give it its chances.
        for (int round = 0; round < 5; round++) {
            List<String> outputs = killRankZero();
            for (int r = 1; r < SIZE; r++) {
                assertTrue(outputs.get(r).contains("lost rank 0:"), "round " + round + ", rank " + r + ": "
                        + outputs.get(r));
            }
        }
    }

    /** Runs a job over TCP, kills rank 0 once every rank is reducing; what each of the others printed. */
    private static List<String> killRankZero() throws Exception {
        int port = Ranks.freePort();
        String secret = JobSecret.generate().toHex();
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<Process> ranks = new ArrayList<>();
        StringBuilder[] outputs = new StringBuilder[SIZE];
        CountDownLatch ready = new CountDownLatch(SIZE);
        List<Thread> readers = new ArrayList<>();
        try {
            for (int r = 0; r < SIZE; r++) {
                ProcessBuilder pb = new ProcessBuilder(java, "--enable-native-access=ALL-UNNAMED",
                        "--add-modules=jdk.incubator.vector", "-XX:+UseSerialGC", "-cp",
                        System.getProperty("java.class.path"), Main.class.getName()).redirectErrorStream(true);
                Map<String, String> env = pb.environment();
                env.keySet().removeIf(k -> k.startsWith("KOLO_") || k.startsWith("OMPI_") || k.startsWith("PMI")
                        || k.startsWith("SLURM_"));
                env.putAll(Map.of("KOLO_RANK", Integer.toString(r), "KOLO_SIZE", Integer.toString(SIZE),
                        "KOLO_RENDEZVOUS_ADDR", "127.0.0.1", "KOLO_RENDEZVOUS_PORT", Integer.toString(port),
                        "KOLO_SECRET", secret, "KOLO_TRANSPORT", "tcp", "KOLO_START_TIMEOUT_SECONDS", "30"));
                Process p = pb.start();
                ranks.add(p);
                StringBuilder out = new StringBuilder();
                outputs[r] = out;
                readers.add(Thread.ofPlatform().daemon().start(() -> {
                    try (BufferedReader in = new BufferedReader(new InputStreamReader(p.getInputStream(),
                            StandardCharsets.UTF_8))) {
                        for (String line; (line = in.readLine()) != null; ) {
                            synchronized (out) {
                                out.append(line).append('\n');
                            }
                            if (line.equals("ready")) {
                                ready.countDown();
                            }
                        }
                    } catch (java.io.IOException e) {
                        // The rank was killed.
                    }
                }));
            }
            assertTrue(ready.await(60, TimeUnit.SECONDS), "ranks did not start: " + List.of(outputs));
            ranks.getFirst().destroyForcibly();
            List<String> said = new ArrayList<>(List.of(""));
            for (int r = 1; r < SIZE; r++) {
                assertTrue(ranks.get(r).waitFor(60, TimeUnit.SECONDS), "rank " + r + " did not exit: " + outputs[r]);
                readers.get(r).join(10_000);
                assertEquals(3, ranks.get(r).exitValue(), outputs[r].toString());
                said.add(outputs[r].toString());
            }
            return said;
        } finally {
            for (Process p : ranks) {
                p.destroyForcibly();
            }
        }
    }
}
