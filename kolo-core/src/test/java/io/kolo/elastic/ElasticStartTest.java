package io.kolo.elastic;

import io.kolo.Kolo;
import io.kolo.ReduceOp;
import io.kolo.Topology;
import io.kolo.bootstrap.ElasticGeneration;
import io.kolo.bootstrap.RendezvousServer;
import io.kolo.launch.JobSecret;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A worker that an elastic launcher starts into a job that cannot form: its very first {@code Kolo.init()} (inside
 * {@code Elastic.run}) fails. It must wait for the launcher's next job, as a worker that survived into that job does.
 * Before, the failure was thrown out of {@code Elastic.run} and the worker ended. The test plays the launcher: a real
 * rendezvous store, generations published in it, the worker a real JVM.
 */
@Timeout(120)
class ElasticStartTest {

    /** Runs {@code Elastic.run} with one allreduce and prints "done as rank R of S". */
    public static final class Main {
        public static void main(String[] args) {
            try {
                String where = Elastic.run(new ObjectState(Map.of("step", 0L)), s -> {
                    float[] one = {1};
                    Kolo.allreduce(one, ReduceOp.SUM);
                    return "rank " + Kolo.rank() + " of " + Kolo.size() + " (sum " + (int) one[0] + ")";
                });
                System.out.println("done as " + where);
            } finally {
                Kolo.shutdown();
            }
        }
    }

    @Test
    void aNewWorkerWhoseFirstJobCannotFormWaitsForTheNextAsASurvivorDoes() throws Exception {
        JobSecret secret = JobSecret.generate();
        try (RendezvousServer store = RendezvousServer.start(InetAddress.getLoopbackAddress(), 0, secret)) {
            // Job 0 has two ranks; the other one never comes, so this worker's start times out.
            publish(store, 0, new ElasticGeneration.Assignment(new Topology(0, 2, 0, 1, 0, 2), "h0"), "start");
            Process worker = start(store, secret);
            try {
                StringBuilder err = new StringBuilder();
                CompletableFuture<Void> failedToStart = new CompletableFuture<>();
                Thread.ofPlatform().daemon().start(() -> readLines(worker, err, failedToStart));
                CompletableFuture<String> out = CompletableFuture.supplyAsync(() -> readAll(worker));
                try {
                    failedToStart.get(60, TimeUnit.SECONDS);
                } catch (java.util.concurrent.ExecutionException ended) {
                    throw new AssertionError("the worker ended instead of waiting for the next job: exit "
                            + worker.waitFor() + "\n" + err);
                }
                assertTrue(worker.isAlive(), err.toString());
                // The launcher's next job: this worker alone.
                publish(store, 1, new ElasticGeneration.Assignment(new Topology(0, 1, 0, 1, 0, 1), "h0"), "rank 1 failed");
                assertTrue(worker.waitFor(60, TimeUnit.SECONDS), "the worker did not finish: " + err);
                assertEquals(0, worker.exitValue(), err.toString());
                assertEquals("done as rank 0 of 1 (sum 1)", out.get(10, TimeUnit.SECONDS).strip(), err.toString());
                assertTrue(err.toString().contains("kolo: worker w0: joined job 1 as rank 0 of 1"), err.toString());
            } finally {
                worker.destroyForcibly();
            }
        }
    }

    private static void publish(RendezvousServer store, int generation, ElasticGeneration.Assignment w0,
                                String why) {
        store.put(ElasticGeneration.assignmentKey(generation, "w0"), w0.encode());
        store.put(ElasticGeneration.reasonKey(generation), why);
        store.put(ElasticGeneration.LATEST, Integer.toString(generation));
    }

    /** Worker w0 of job 0, as the elastic launcher starts one: rank 0 of 2 over TCP, a start timeout of 2 s. */
    private static Process start(RendezvousServer store, JobSecret secret) throws java.io.IOException {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        ProcessBuilder pb = new ProcessBuilder(java, "--enable-native-access=ALL-UNNAMED", "-XX:+UseSerialGC", "-cp",
                System.getProperty("java.class.path"), Main.class.getName());
        Map<String, String> env = pb.environment();
        env.keySet().removeIf(k -> k.startsWith("KOLO_") || k.startsWith("OMPI_") || k.startsWith("PMI")
                || k.startsWith("SLURM_"));
        env.putAll(new ElasticGeneration.Assignment(new Topology(0, 2, 0, 1, 0, 2), "h0").applyTo(Map.of(), 0));
        env.putAll(Map.of("KOLO_RENDEZVOUS_ADDR", "127.0.0.1",
                "KOLO_RENDEZVOUS_PORT", Integer.toString(store.address().getPort()),
                "KOLO_RENDEZVOUS_SERVER", "launcher", "KOLO_SECRET", secret.toHex(),
                "KOLO_START_TIMEOUT_SECONDS", "2", "KOLO_TRANSPORT", "tcp",
                "KOLO_ELASTIC_WORKER", "w0", "KOLO_ELASTIC_TIMEOUT_SECONDS", "60"));
        return pb.start();
    }

    /** Collects stderr; completes {@code failedToStart} at the worker's line saying so, exceptionally at its end. */
    private static void readLines(Process p, StringBuilder err, CompletableFuture<Void> failedToStart) {
        try (BufferedReader in = new BufferedReader(new InputStreamReader(p.getErrorStream(), StandardCharsets.UTF_8))) {
            for (String line; (line = in.readLine()) != null; ) {
                synchronized (err) {
                    err.append(line).append('\n');
                }
                if (line.startsWith("kolo: worker w0: job 0 failed while starting (")
                        && line.endsWith("); waiting for the next")) {
                    failedToStart.complete(null);
                }
            }
        } catch (java.io.IOException e) {
            // The worker is gone: handled below.
        }
        failedToStart.completeExceptionally(new IllegalStateException("ended"));
    }

    private static String readAll(Process p) {
        try {
            return new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        } catch (java.io.IOException e) {
            return "(unreadable: " + e + ")";
        }
    }
}
