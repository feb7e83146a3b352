package io.kolo.launcher.nodes;

import io.kolo.launcher.ViewClient;
import io.kolo.launcher.workers.ViewWorker;
import io.kolo.launcher.workers.Worker;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code kolo run --nnodes}: one launcher per "node", each a real process on this machine, running real Kolo
 * workers (or shell ranks) that meet at node 0's rendezvous.
 */
@Timeout(180)
class NodeRunTest {

    static List<String> args(int nnodes, int node, int perNode, int port, String... command) {
        List<String> a = new ArrayList<>(List.of("run", "--nnodes", "" + nnodes, "--node-rank", "" + node,
                "--rendezvous", "127.0.0.1:" + port, "-np-per-node", "" + perNode, "--start-timeout", "60"));
        a.addAll(List.of(command));
        return a;
    }

    static List<String> worker(String mode, Path pids) {
        return List.of("-cp", NodeLaunchers.CP, Worker.class.getName(), mode, pids.toString());
    }

    static List<String> concat(List<String> a, List<String> b) {
        List<String> r = new ArrayList<>(a);
        r.addAll(b);
        return r;
    }

    @Test
    void twoNodesGiveEachRankItsPlaceAndOneRendezvous(@TempDir Path dir) throws Exception {
        int port = NodeLaunchers.freePort();
        String script = "echo $KOLO_RANK/$KOLO_SIZE $KOLO_LOCAL_RANK/$KOLO_LOCAL_SIZE $KOLO_CROSS_RANK/$KOLO_CROSS_SIZE"
                + " $KOLO_RENDEZVOUS_ADDR:$KOLO_RENDEZVOUS_PORT ${#KOLO_SECRET}";
        try (NodeLaunchers nodes = new NodeLaunchers()) {
            NodeLaunchers.Node n0 = nodes.start(0, args(2, 0, 2, port, "--", "sh", "-c", script));
            NodeLaunchers.Node n1 = nodes.start(1, args(2, 1, 2, port, "--", "sh", "-c", script));
            assertEquals(0, n0.await(), n0.output());
            assertEquals(0, n1.await(), n1.output());
            String at = " 127.0.0.1:" + port + " 64";
            assertEquals(List.of("[0]<stdout>:0/4 0/2 0/2" + at, "[1]<stdout>:1/4 1/2 0/2" + at),
                    n0.out().toString().lines().sorted().toList());
            assertEquals(List.of("[2]<stdout>:2/4 0/2 1/2" + at, "[3]<stdout>:3/4 1/2 1/2" + at),
                    n1.out().toString().lines().sorted().toList());
        }
    }

    /** Node 0 holds the store, so its view shows every node's ranks; another node's --report writes nothing. */
    @Test
    void node0sReportShowsTheRanksOfEveryNode(@TempDir Path dir) throws Exception {
        int port = NodeLaunchers.freePort();
        Path pids = Files.createDirectories(dir.resolve("pids"));
        List<String> program = List.of("-cp", NodeLaunchers.CP, ViewWorker.class.getName(), "4", pids.toString());
        try (NodeLaunchers nodes = new NodeLaunchers()) {
            NodeLaunchers.Node n0 = nodes.start(0, concat(args(2, 0, 2, port, "--report",
                    dir.resolve("node0.html").toString()), program));
            NodeLaunchers.Node n1 = nodes.start(1, concat(args(2, 1, 2, port, "--report",
                    dir.resolve("node1.html").toString()), program));
            assertEquals(0, n0.await(), n0.output());
            assertEquals(0, n1.await(), n1.output());
            assertTrue(n1.err().toString().contains("kolo: node 1: --dashboard and --report are node 0's"),
                    n1.output());
        }
        assertFalse(Files.exists(dir.resolve("node1.html")));
        com.fasterxml.jackson.databind.JsonNode job = ViewClient.reportJson(dir.resolve("node0.html"));
        assertEquals("SUCCEEDED", job.get("state").asText());
        assertEquals(4, job.get("size").asInt());
        assertEquals(4, job.get("ranks").size(), job.get("ranks").toString());
        for (com.fasterxml.jackson.databind.JsonNode r : job.get("ranks")) {
            assertTrue(r.get("ops").asLong() > 0, r.toString());
            assertTrue(r.get("pid").asLong() > 0, r.toString());
        }
    }

    /** Three nodes of real Kolo ranks; the last one starts 20 s after the others, which wait for it. */
    @Test
    void threeNodesAllreduceWithOneStarting20SecondsLate(@TempDir Path pids) throws Exception {
        int port = NodeLaunchers.freePort();
        try (NodeLaunchers nodes = new NodeLaunchers()) {
            List<NodeLaunchers.Node> started = new ArrayList<>();
            for (int n = 0; n < 2; n++) {
                started.add(nodes.start(n, concat(args(3, n, 1, port), worker("steady", pids))));
            }
            Thread.sleep(20_000);
            assertTrue(started.get(0).process().isAlive(), "node 0 gave up before the late node came: "
                    + started.get(0).output());
            started.add(nodes.start(2, concat(args(3, 2, 1, port), worker("steady", pids))));
            for (NodeLaunchers.Node n : started) {
                assertEquals(0, n.await(), n.output());
                assertEquals(List.of("[" + n.rank() + "]<stdout>:rank " + n.rank() + " ok"),
                        n.out().toString().lines().filter(l -> l.contains(" ok")).toList());
            }
            assertNothingLeft(pids);
        }
    }

    /** Rank 1 (node 0) exits with 3 mid-allreduce: the ranks on node 1 fail fast naming it, both launchers exit 3. */
    @Test
    void aRankFailingOnOneNodeFailsEveryNodeNamingIt(@TempDir Path pids) throws Exception {
        int port = NodeLaunchers.freePort();
        try (NodeLaunchers nodes = new NodeLaunchers()) {
            NodeLaunchers.Node n0 = nodes.start(0, concat(args(2, 0, 2, port), worker("exit-mid-allreduce", pids)));
            NodeLaunchers.Node n1 = nodes.start(1, concat(args(2, 1, 2, port), worker("exit-mid-allreduce", pids)));
            assertEquals(3, n0.await(), n0.output());
            assertEquals(3, n1.await(), n1.output());
            assertTrue(n0.err().toString().contains("kolo: rank 1 on node 0 ("), n0.output());
            assertTrue(n0.err().toString().contains(") failed: called System.exit at " + Worker.class.getName()
                    + ".main(") && n0.err().toString().contains("(exit code 3); terminating the other 1 rank"), n0.output());
            List<String> failedFast = n1.out().toString().lines().filter(l -> l.contains("failed fast")).toList();
            assertEquals(2, failedFast.size(), n1.output());
            failedFast.forEach(l -> assertTrue(l.contains("rank 1 on node 0"), l));
            assertTrue(n1.err().toString().contains("rank 1 on node 0 ("), n1.output());
            assertNothingLeft(pids);
        }
    }

    /** Ranks that are not Kolo programs: node 0's launcher itself stops them when a rank on node 1 fails. */
    @Test
    void aFailureOnAnotherNodeStopsRanksThatWouldRunOn(@TempDir Path dir) throws Exception {
        int port = NodeLaunchers.freePort();
        try (NodeLaunchers nodes = new NodeLaunchers()) {
            NodeLaunchers.Node n0 = nodes.start(0, args(2, 0, 1, port, "--", "sh", "-c", "sleep 120"));
            NodeLaunchers.Node n1 = nodes.start(1, args(2, 1, 1, port, "--", "sh", "-c", "sleep 1; exit 4"));
            assertEquals(4, n1.await(), n1.output());
            assertEquals(4, n0.await(), n0.output());
            assertTrue(n0.err().toString().contains("kolo: rank 1 on node 1 (") && n0.err().toString()
                    .contains(") exited with code 4; terminating this node's 1 rank"), n0.output());
        }
    }

    /** A node dies outright (launcher and ranks SIGKILLed, as a deleted pod): every other node fails, naming it. */
    @Test
    void aNodeKilledMidJobFailsTheOthers(@TempDir Path pids) throws Exception {
        int port = NodeLaunchers.freePort();
        try (NodeLaunchers nodes = new NodeLaunchers()) {
            List<NodeLaunchers.Node> started = new ArrayList<>();
            for (int n = 0; n < 3; n++) {
                started.add(nodes.start(n, concat(args(3, n, 1, port), worker("forever", pids))));
            }
            for (NodeLaunchers.Node n : started) {
                NodeLaunchers.awaitLines(n, "reducing", 1);
            }
            NodeLaunchers.kill(started.get(1));
            for (int n : new int[] {0, 2}) {
                NodeLaunchers.Node node = started.get(n);
                assertNotEquals(0, node.await(), node.output());
                assertTrue(node.out().toString().contains("[" + n + "]<stdout>:rank " + n + " failed fast"),
                        node.output());
            }
            assertTrue(started.get(0).err().toString().contains("node 1 (rank 1) was lost: its kolo run stopped"
                    + " answering"), started.get(0).output());
            assertNothingLeft(pids);
        }
    }

    /**
     * Node 1's launcher gets SIGTERM (Ctrl-C, scancel, a pod stopped): node 0 stops its ranks naming that and exits at
     * once, without first waiting for node 1's heartbeat to run out and then calling node 1 lost. (Whether node 1 got
     * to say it was done before its JVM halted was a race it lost about half the time, hence three tries.)
     */
    @org.junit.jupiter.api.RepeatedTest(3)
    void aNodeStoppedBySignalEndsNode0WithoutWaitingForItsHeartbeat(@TempDir Path dir) throws Exception {
        try (NodeLaunchers nodes = new NodeLaunchers()) {
            List<NodeLaunchers.Node> up = twoNodesUp(nodes);
            NodeLaunchers.Node n0 = up.get(0);
            NodeLaunchers.Node n1 = up.get(1);
            n1.process().destroy();
            assertEquals(143, n1.await(), n1.output());
            assertEquals(143, n0.await(), n0.output());
            assertTrue(n0.err().toString().contains("kolo: node 1 (") && n0.err().toString().contains(
                    "'s kolo run was stopped by a signal; terminating this node's 1 rank"), n0.output());
            // Before, node 0 waited for node 1's heartbeat to run out (10 s) and then called it lost as well.
            assertFalse(n0.err().toString().contains("was lost"), n0.output());
        }
    }

    /**
     * Ctrl-C (SIGINT) to node 1's launcher: both nodes exit 130, as a Ctrl-C'd kolo run does. Before: node 1 was
     * recorded as stopped with 143 (SIGTERM's code), and node 0 exited 143.
     */
    @Test
    void aNodeStoppedByCtrlCEndsEveryNodeWith130(@TempDir Path dir) throws Exception {
        io.kolo.launcher.Sigint.assumeDeliverable();
        try (NodeLaunchers nodes = new NodeLaunchers()) {
            List<NodeLaunchers.Node> up = twoNodesUp(nodes);
            NodeLaunchers.Node n0 = up.get(0);
            NodeLaunchers.Node n1 = up.get(1);
            new ProcessBuilder("kill", "-INT", Long.toString(n1.process().pid())).start().waitFor();
            assertEquals(130, n1.await(), n1.output());
            assertEquals(130, n0.await(), n0.output());
        }
    }

    /** Two nodes of one rank each, whose ranks have started and wait (two minutes) to be stopped. */
    private static List<NodeLaunchers.Node> twoNodesUp(NodeLaunchers nodes) throws Exception {
        int port = NodeLaunchers.freePort();
        List<NodeLaunchers.Node> up = new ArrayList<>();
        for (int n = 0; n < 2; n++) {
            up.add(nodes.start(n, args(2, n, 1, port, "--", "sh", "-c", "echo up; sleep 120")));
        }
        for (NodeLaunchers.Node node : up) {
            NodeLaunchers.awaitLines(node, "up", 1);
        }
        return up;
    }

    @Test
    void aRendezvousNameThatIsNotNode0sIsRefusedByNode0(@TempDir Path dir) throws Exception {
        try (NodeLaunchers nodes = new NodeLaunchers()) {
            // 192.0.2.1 (TEST-NET-1) is no address of this machine; nothing is sent to it.
            NodeLaunchers.Node n0 = nodes.start(0, List.of("run", "--nnodes", "2", "--node-rank", "0", "--rendezvous",
                    "192.0.2.1:29511", "--", "true"));
            assertEquals(2, n0.await(), n0.output());
            assertTrue(n0.err().toString().contains("resolves to 192.0.2.1 on node 0, which is not an address of"
                    + " this host"), n0.output());
        }
    }

    static void assertNothingLeft(Path pids) throws Exception {
        try (Stream<Path> files = Files.list(pids)) {
            for (Path f : files.toList()) {
                long pid = Long.parseLong(Files.readString(f).trim());
                for (int i = 0; i < 50 && ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false); i++) {
                    Thread.sleep(100);
                }
                assertFalse(ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false),
                        f.getFileName() + " (pid " + pid + ") is still running");
            }
        }
    }
}
