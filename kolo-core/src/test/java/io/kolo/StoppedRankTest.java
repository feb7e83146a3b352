package io.kolo;

import io.kolo.launch.JobSecret;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Timeout;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A rank that stops answering without closing a connection, as a host cut off from the network does, in a job with no
 * launcher (ranks started as under mpirun: rank 0 serves the store): here a rank process stopped with SIGSTOP. The
 * others fail on their op timeout, and each must name the stopped rank and its host, though in a ring most of them
 * wait on a rank that is alive and waiting itself. Before, the first to fail said "some rank has stopped sending" or
 * "some rank has not submitted it yet", or named the neighbour it waited on, without a host.
 */
@Timeout(180)
class StoppedRankTest {
    private static final int SIZE = 3;

    /** Allreduces "grad.w" of {@code args[0]} floats until it fails; prints "ready" after the first, "failed: E" last. */
    public static final class Main {
        public static void main(String[] args) {
            try (Communicator comm = Communicator.fromEnvironment()) {
                Tensor x = Tensor.of(new float[Integer.parseInt(args[0])]);
                comm.allreduce("grad.w", x, ReduceOp.SUM);
                System.out.println("ready");
                while (true) {
                    comm.allreduce("grad.w", x, ReduceOp.SUM);
                }
            } catch (RuntimeException e) {
                System.out.println("failed: " + e);
                System.exit(3);
            }
        }
    }

    /**
     * @param floats  the op's size: large ones run a ring, small ones wait in the cycle's vote before it
     * @param stopped   the rank stopped; rank 0 serves the job's store, which stops with it
     * @param transport {@code KOLO_TRANSPORT}: tcp as between hosts, shm as on one
     */
    @ParameterizedTest(name = "{0} floats, rank {1} stopped, {2}")
    @CsvSource({"1048576, 2, tcp", "4096, 2, tcp", "1048576, 0, tcp", "1048576, 1, shm"})
    void everyOtherRankNamesTheStoppedRankAndItsHost(int floats, int stopped, String transport) throws Exception {
        List<String> said = stopOneRank(floats, stopped, transport);
        for (int r = 0; r < SIZE; r++) {
            if (r == stopped) {
                continue;
            }
            String out = said.get(r);
            assertTrue(out.contains("failed: ") && out.contains("rank " + stopped + " (host h" + stopped + ")")
                    && out.contains("it may have died or been stopped, or its host cut off from the network"),
                    "rank " + r + " did not name rank " + stopped + " and its host:\n" + out + "\nevery rank said:\n"
                            + String.join("\n", said));
        }
    }

    /** Runs a job, stops {@code stopped} once every rank reduces; what each rank printed. */
    private static List<String> stopOneRank(int floats, int stopped, String transport) throws Exception {
        int port = Ranks.freePort();
        String secret = JobSecret.generate().toHex();
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<Process> ranks = new ArrayList<>();
        List<StringBuilder> outputs = new ArrayList<>();
        CountDownLatch ready = new CountDownLatch(SIZE);
        try {
            for (int r = 0; r < SIZE; r++) {
                ProcessBuilder pb = new ProcessBuilder(java, "--enable-native-access=ALL-UNNAMED",
                        "--add-modules=jdk.incubator.vector", "-XX:+UseSerialGC", "-cp",
                        System.getProperty("java.class.path"), Main.class.getName(), Integer.toString(floats))
                        .redirectErrorStream(true);
                Map<String, String> env = pb.environment();
                env.keySet().removeIf(k -> k.startsWith("KOLO_") || k.startsWith("OMPI_") || k.startsWith("PMI")
                        || k.startsWith("SLURM_"));
                env.putAll(Map.of("KOLO_RANK", Integer.toString(r), "KOLO_SIZE", Integer.toString(SIZE),
                        "KOLO_RENDEZVOUS_ADDR", "127.0.0.1", "KOLO_RENDEZVOUS_PORT", Integer.toString(port),
                        "KOLO_SECRET", secret, "KOLO_TRANSPORT", transport, "KOLO_START_TIMEOUT_SECONDS", "60",
                        "KOLO_TIMEOUT_SECONDS", "4", "KOLO_HOSTNAME", "h" + r));
                Process p = pb.start();
                ranks.add(p);
                StringBuilder out = new StringBuilder();
                outputs.add(out);
                Thread.ofPlatform().daemon().start(() -> read(p, out, ready));
            }
            assertTrue(ready.await(90, TimeUnit.SECONDS), "the ranks did not start: " + outputs);
            Process target = ranks.get(stopped);
            assertTrue(new ProcessBuilder("kill", "-STOP", Long.toString(target.pid())).start().waitFor() == 0,
                    "kill -STOP failed");
            for (int r = 0; r < SIZE; r++) {
                if (r != stopped) {
                    assertTrue(ranks.get(r).waitFor(90, TimeUnit.SECONDS), "rank " + r + " did not end: "
                            + outputs.get(r));
                }
            }
            List<String> said = new ArrayList<>();
            for (StringBuilder out : outputs) {
                synchronized (out) {
                    said.add(out.toString());
                }
            }
            return said;
        } finally {
            for (Process p : ranks) {
                p.destroyForcibly();   // SIGKILL ends a stopped process too
            }
        }
    }

    private static void read(Process p, StringBuilder out, CountDownLatch ready) {
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
        } catch (IOException e) {
            // The process is gone; what it printed so far is kept.
        }
    }
}
