package io.kolo.launch;

import io.kolo.ReduceOp;
import org.junit.jupiter.api.Test;

import java.net.InetAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Whole jobs started the way an embedder (kolo-spark, a scheduler) starts them, through the public API alone: a
 * {@link RendezvousService} on loopback, each rank's variables from {@link WorkerEnvironment}, ranks as threads joining
 * with {@code Communicator.fromEnvironment}, over real sockets and shared memory.
 */
class EmbeddedJobTest {
    private static final InetAddress LOOPBACK = InetAddress.getLoopbackAddress();

    @Test
    void threeRanksOnTwoHostsJoinThroughTheServiceAndAllreduceExactly() throws Exception {
        JobSecret secret = JobSecret.generate();
        // Hosts as a process manager reports them, not in rank order: rank 1 is alone on its host.
        List<String> hosts = List.of("node-a", "node-b", "node-a");
        try (RendezvousService store = RendezvousService.start(LOOPBACK, 0, secret)) {
            List<Map<String, String>> envs = new ArrayList<>();
            for (int r = 0; r < 3; r++) {
                envs.add(WorkerEnvironment.forRank(r, hosts).rendezvous(store.address()).secret(secret)
                        .startTimeout(Duration.ofSeconds(30)).timeout(Duration.ofSeconds(60)).build());
            }
            List<Object> results = LaunchedRanks.run(envs, 90, comm -> {
                double[] x = new double[100_000];   // large enough for the ring, not only recursive doubling
                Arrays.fill(x, comm.rank() + 1);
                comm.allreduce(x, ReduceOp.SUM);
                return new double[]{x[0], x[x.length - 1], comm.rank(), comm.size(), comm.localRank(),
                        comm.localSize(), comm.crossRank(), comm.crossSize()};
            });
            // Horovod's cross coordinates: rank 2 is the only rank with local rank 1.
            double[][] expected = {{6, 6, 0, 3, 0, 2, 0, 2}, {6, 6, 1, 3, 0, 1, 1, 2}, {6, 6, 2, 3, 1, 2, 0, 1}};
            for (int r = 0; r < 3; r++) {
                if (results.get(r) instanceof Throwable t) {
                    throw new AssertionError("rank " + r + " failed: " + t, t);
                }
                assertArrayEquals(expected[r], (double[]) results.get(r), "rank " + r);
            }
        }
    }

    @Test
    void twoRanksPlacedByHandWithSettingsFromTheEnvironment() throws Exception {
        JobSecret secret = JobSecret.generate();
        Map<String, String> settings = WorkerEnvironment.settingsFrom(Map.of("KOLO_CYCLE_TIME", "0.5",
                "KOLO_RANK", "7", "KOLO_SECRET", "not taken", "PATH", "/bin"));
        assertEquals(Map.of("KOLO_CYCLE_TIME", "0.5"), settings);
        try (RendezvousService store = RendezvousService.start(LOOPBACK, 0, secret)) {
            List<Map<String, String>> envs = new ArrayList<>();
            for (int r = 0; r < 2; r++) {
                envs.add(WorkerEnvironment.forRank(r, 2).local(r, 2).cross(0, 1).hostname("here")
                        .rendezvous("127.0.0.1", store.address().getPort()).secret(secret)
                        .settings(settings).startTimeout(Duration.ofSeconds(30)).build());
            }
            assertEquals("0.5", envs.getFirst().get("KOLO_CYCLE_TIME"));
            List<Object> results = LaunchedRanks.run(envs, 90, comm -> {
                long[] x = {comm.rank() + 10L};
                comm.allreduce(x, ReduceOp.MAX);
                return x[0];
            });
            assertEquals(List.of(11L, 11L), results);
        }
    }

    @Test
    void aJobOfOneRankNeedsNoServiceAtAll() throws Exception {
        Map<String, String> env = WorkerEnvironment.forRank(0, 1).build();
        assertEquals(List.of(1), LaunchedRanks.run(List.of(env), 60, comm -> comm.size()));
    }

    @Test
    void aRankWithTheSecretOfAnotherAttemptCannotJoinAndTheJobFailsWithinTheStartTimeout() throws Exception {
        JobSecret secret = JobSecret.generate();
        JobSecret otherAttempt = secret.derive("attempt 1");
        try (RendezvousService store = RendezvousService.start(LOOPBACK, 0, secret)) {
            List<Map<String, String>> envs = new ArrayList<>();
            for (int r = 0; r < 2; r++) {
                envs.add(WorkerEnvironment.forRank(r, 2).rendezvous(store.address())
                        .secret(r == 1 ? otherAttempt : secret).startTimeout(Duration.ofSeconds(3)).build());
            }
            List<Object> results = LaunchedRanks.run(envs, 60, comm -> "joined");
            for (int r = 0; r < 2; r++) {
                Throwable t = assertInstanceOf(Throwable.class, results.get(r), "rank " + r + " joined");
                assertTrue(t.getMessage() != null && !t.getMessage().contains("\n"), "one line: " + t.getMessage());
                assertTrue(!t.getMessage().contains(secret.toHex()) && !t.getMessage().contains(otherAttempt.toHex()),
                        "no secret in " + t.getMessage());
            }
        }
    }
}
