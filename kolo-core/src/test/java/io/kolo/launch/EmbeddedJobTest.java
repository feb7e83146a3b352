package io.kolo.launch;

import io.kolo.ProcessSet;
import io.kolo.ReduceOp;
import io.kolo.bootstrap.CapturedLog;
import org.junit.jupiter.api.Test;

import java.net.InetAddress;
import java.text.MessageFormat;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.logging.Level;

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

    /**
     * Hosts a:1, b:2, c:2, where Horovod's cross rank is no host number (rank 2 has cross rank 0, as rank 0 has): the
     * ranks tell each other their hosts at start, so the set of b's and c's ranks, two hosts of two, reduces
     * hierarchically and exactly; only the whole job, on uneven hosts, is refused the hierarchy (with the one warning
     * a setting asked for and not granted gives).
     */
    @Test
    void aProcessSetOnUnevenHostsReducesExactlyWithTheHierarchyOn() throws Exception {
        JobSecret secret = JobSecret.generate();
        List<String> hosts = List.of("node-a", "node-b", "node-b", "node-c", "node-c");
        try (RendezvousService store = RendezvousService.start(LOOPBACK, 0, secret)) {
            List<Map<String, String>> envs = new ArrayList<>();
            for (int r = 0; r < hosts.size(); r++) {
                envs.add(WorkerEnvironment.forRank(r, hosts).rendezvous(store.address()).secret(secret)
                        .settings(Map.of("KOLO_HIERARCHICAL_ALLREDUCE", "1", "KOLO_HIERARCHICAL_ALLGATHER", "1",
                                "KOLO_DYNAMIC_PROCESS_SETS", "1"))
                        .startTimeout(Duration.ofSeconds(30)).timeout(Duration.ofSeconds(60)).build());
            }
            List<Object> results;
            List<String> refusals;
            try (CapturedLog log = CapturedLog.of("io.kolo.collective.Hierarchy")) {
                results = LaunchedRanks.run(envs, 120, comm -> {
                    ProcessSet bc = comm.addProcessSet(1, 2, 3, 4);
                    double[] x = new double[100_000];   // above the small-message threshold: the hierarchical path
                    for (int i = 0; i < x.length; i++) {
                        x[i] = comm.rank() * 1000.0 + i;
                    }
                    if (comm.rank() >= 1) {
                        comm.on(bc).allreduce(x, ReduceOp.SUM);
                    }
                    double[] all = new double[100_000];
                    Arrays.fill(all, comm.rank() + 1);
                    comm.allreduce(all, ReduceOp.SUM);
                    return new double[] {x[0], x[x.length - 1], all[0], all[all.length - 1]};
                });
                refusals = log.records().stream().filter(r -> r.getLevel() == Level.WARNING)
                        .map(r -> MessageFormat.format(r.getMessage(), r.getParameters())).toList();
            }
            assertEquals(List.of("hierarchical collectives not used: hosts run different numbers of ranks (1 on host 0,"
                    + " 2 on host 1)"), refusals);
            double last = x0(1) + x0(2) + x0(3) + x0(4) + 4 * 99_999.0;
            for (int r = 0; r < hosts.size(); r++) {
                if (results.get(r) instanceof Throwable t) {
                    throw new AssertionError("rank " + r + " failed: " + t, t);
                }
                double[] expected = r == 0 ? new double[] {0, 99_999, 15, 15}
                        : new double[] {x0(1) + x0(2) + x0(3) + x0(4), last, 15, 15};
                assertArrayEquals(expected, (double[]) results.get(r), "rank " + r);
            }
        }
    }

    private static double x0(int rank) {
        return rank * 1000.0;
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
