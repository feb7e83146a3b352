package io.kolo.launcher.cluster;

import io.kolo.launcher.job.Job;

import io.kolo.launcher.nodes.NodeLaunchers;
import io.kolo.launcher.workers.Worker;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code kolo run --nnodes} with one launcher on each network-namespace host (its own address, host name and
 * {@code /dev/shm}, so ranks on different hosts talk TCP), meeting at node 0 by name as the pods of a Kubernetes
 * Indexed Job do. Skipped (reason printed) where namespaces are not available.
 */
@Timeout(180)
class NodesAcrossHostsTest {
    @TempDir
    static Path dir;
    static NetnsCluster cluster;

    @BeforeAll
    static void startCluster() {
        cluster = NetnsCluster.start(3, dir.resolve("cluster"));
        cluster.resolveNamesOnHosts();
    }

    @AfterAll
    static void stopCluster() {
        if (cluster != null) {
            cluster.close();
        }
    }

    static List<String> node(int nnodes, int rank, int perNode, String mode, Path pids) {
        return List.of("run", "--nnodes", "" + nnodes, "--node-rank", "" + rank, "--rendezvous",
                cluster.hostName(0) + ":29400", "--np-per-node", "" + perNode, "--start-timeout", "60",
                "-cp", NodeLaunchers.CP, Worker.class.getName(), mode, pids.toString());
    }

    /**
     * Three hosts: node 0's name resolves only after 3 s (its pod has no address yet), and node 2 starts 20 s after
     * the others; every node waits, and the ranks allreduce across the hosts.
     */
    @Test
    void threeHostsMeetByNameWithALateNameAndANodeStarting20SecondsLate() throws Exception {
        Path pids = Files.createDirectories(dir.resolve("pids-late"));
        cluster.hideName(0);
        try (NodeLaunchers nodes = new NodeLaunchers(cluster::onHost)) {
            List<NodeLaunchers.Node> started = new ArrayList<>();
            for (int n = 0; n < 2; n++) {
                started.add(nodes.start(n, node(3, n, 1, "steady", pids)));
            }
            Thread.sleep(3_000);
            cluster.revealName(0);
            Thread.sleep(17_000);
            started.add(nodes.start(2, node(3, 2, 1, "steady", pids)));
            for (NodeLaunchers.Node n : started) {
                assertEquals(0, n.await(), n.output());
                assertEquals(List.of("[" + n.rank() + "]<stdout>:rank " + n.rank() + " ok"),
                        n.out().toString().lines().filter(l -> l.contains(" ok")).toList());
            }
        } finally {
            cluster.revealName(0);
        }
    }

    /** Two hosts of two ranks; host 1 dies (its launcher and ranks killed): node 0 fails, naming the lost node. */
    @Test
    void aHostKilledMidJobFailsNode0NamingIt() throws Exception {
        Path pids = Files.createDirectories(dir.resolve("pids-killed"));
        try (NodeLaunchers nodes = new NodeLaunchers(cluster::onHost)) {
            NodeLaunchers.Node n0 = nodes.start(0, node(2, 0, 2, "forever", pids));
            NodeLaunchers.Node n1 = nodes.start(1, node(2, 1, 2, "forever", pids));
            NodeLaunchers.awaitLines(n0, "reducing", 2);
            NodeLaunchers.awaitLines(n1, "reducing", 2);
            NodeLaunchers.kill(n1);
            assertNotEquals(0, n0.await(), n0.output());
            assertEquals(2, n0.out().toString().lines().filter(l -> l.contains("failed fast")).count(), n0.output());
            assertTrue(n0.err().toString().contains("kolo: node 1 (ranks 2-3) was lost: its kolo run stopped"
                    + " answering"), n0.output());
            String left = cluster.leftOnHosts();
            assertTrue(left.isEmpty(), "left running: " + left);
        }
    }
}
