package io.kolo.collective;

import io.kolo.DataType;
import io.kolo.Topology;
import io.kolo.bootstrap.Placement;
import io.kolo.transport.LocalTransport;
import io.kolo.transport.Transport;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;

import static io.kolo.collective.HierarchicalCollectivesTest.on;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Which ranks share a host, on hosts that run different numbers of ranks, where Horovod's cross rank is not a host's
 * number: process sets and the hierarchical choice group ranks by their real hosts.
 */
class HostsTest {
    private static final AlgorithmSettings ON = new AlgorithmSettings(AlgorithmSettings.Mode.ON,
            AlgorithmSettings.Mode.ON);

    /** Hosts a:2, b:1, c:2: ranks 2 (b) and 4 (c) have cross rank 1, as if they shared a host. */
    @Test
    void aSetOfUnevenHostsIsNotTakenForTwoHostsOfTwo() {
        List<String> names = List.of("a", "a", "b", "c", "c");
        List<Topology> placed = Placement.of(names);
        assertEquals(placed.get(2).crossRank(), placed.get(4).crossRank());
        Hosts hosts = Hosts.of(placed, names);
        int[] members = {0, 1, 2, 4};
        assertEquals("Hosts[0, 0, 1, 2]", hosts.subset(members).toString());
        Optional<String> obstacle = Hierarchy.obstacle(hosts.subset(members));
        assertTrue(obstacle.orElseThrow().contains("different numbers"), obstacle.get());
        List<Transport> five = LocalTransport.group(5, Duration.ofSeconds(5));
        try (CollectiveOps ops = Hierarchy.forSubset(five.get(4), members, hosts, ON, 1024)) {
            assertInstanceOf(FlatCollectives.class, ops, ops.toString());
        }
        five.forEach(Transport::close);
    }

    /** Hosts a:1, b:2, c:2: the set of b's and c's ranks is two hosts of two, whatever their cross ranks. */
    @Test
    void aSetOfTwoHostsOfTwoAmongUnevenHostsReducesHierarchically() {
        List<String> names = List.of("a", "b", "b", "c", "c");
        Hosts hosts = Hosts.of(Placement.of(names), names);
        int[] members = {1, 2, 3, 4};
        assertEquals("Hosts[0, 0, 1, 1]", hosts.subset(members).toString());
        List<Transport> five = LocalTransport.group(5, Duration.ofSeconds(5));
        try (CollectiveOps ops = Hierarchy.forSubset(five.get(2), members, hosts, ON, 1024)) {
            assertInstanceOf(HierarchicalCollectives.class, ops);
            // Job rank 2 is the set's rank 1: the second rank of the set's first host.
            assertTrue(ops.toString().contains("rank 1 of 4 = host 0 of 2, local 1 of 2"), ops.toString());
        }
        five.forEach(Transport::close);
    }

    /** The members' allreduce over uneven hosts, hierarchical, still sums exactly. */
    @Test
    void theSetsHierarchicalAllreduceOverUnevenHostsIsExact() throws Exception {
        List<String> names = List.of("a", "b", "b", "c", "c");
        Hosts hosts = Hosts.of(Placement.of(names), names);
        int[] members = {1, 2, 3, 4};
        List<Transport> five = LocalTransport.group(5, Duration.ofSeconds(10));
        int n = 10_007;
        List<Thread> threads = new ArrayList<>();
        List<double[]> results = new ArrayList<>(List.of(new double[0], new double[0], new double[0], new double[0]));
        List<Throwable> failures = new ArrayList<>();
        for (int i = 0; i < members.length; i++) {
            int member = i;
            Thread t = Thread.ofPlatform().start(() -> {
                try (CollectiveOps ops = Hierarchy.forSubset(five.get(members[member]), members, hosts, ON, 64)) {
                    assertInstanceOf(HierarchicalCollectives.class, ops);
                    double[] x = new double[n];
                    for (int k = 0; k < n; k++) {
                        x[k] = members[member] * 1000 + k;
                    }
                    try (Arena arena = Arena.ofShared()) {
                        MemorySegment seg = arena.allocate((long) n * Double.BYTES);
                        MemorySegment.copy(x, 0, seg, ValueLayout.JAVA_DOUBLE, 0, n);
                        ops.allreduce(seg, n, DataType.FLOAT64, Reduction.SUM);
                        MemorySegment.copy(seg, ValueLayout.JAVA_DOUBLE, 0, x, 0, n);
                    }
                    synchronized (results) {
                        results.set(member, x);
                    }
                } catch (Throwable e) {
                    synchronized (failures) {
                        failures.add(e);
                    }
                }
            });
            threads.add(t);
        }
        for (Thread t : threads) {
            t.join(Duration.ofSeconds(60));
        }
        five.forEach(Transport::close);
        assertTrue(failures.isEmpty(), failures.toString());
        for (double[] x : results) {
            for (int k = 0; k < n; k++) {
                if (x[k] != (1 + 2 + 3 + 4) * 1000 + 4 * k) {
                    assertEquals((1 + 2 + 3 + 4) * 1000 + 4 * k, x[k], "element " + k);
                }
            }
        }
    }

    @Test
    void namesThatDisagreeWithTheLocalRanksAreNotUsed() {
        // Every rank reports the same machine name, but the launcher said two ranks per host, packed: the hosts
        // follow from the topologies.
        List<Topology> packed = HierarchicalCollectivesTest.packed(2, 2);
        Hosts sameName = Hosts.of(packed, List.of("box", "box", "box", "box"));
        assertEquals("Hosts[0, 0, 1, 1]", sameName.toString());
        // Still each rank's host for a message, though they place no rank.
        assertEquals(Optional.of("box"), sameName.name(3));
        assertEquals(Optional.empty(), sameName.placingNames());
        assertEquals(Optional.empty(), Hosts.of(packed).name(0));
        assertTrue(Hierarchy.obstacle(sameName).isEmpty());
        // Uneven local sizes that no name explains: unknown, so flat rather than a guess.
        List<Topology> uneven = Placement.of(List.of("a", "b", "b"));
        Hosts unknown = Hosts.of(uneven, List.of("x", "x", "x"));
        assertFalse(unknown.known());
        assertTrue(Hierarchy.obstacle(unknown).orElseThrow().contains("which ranks share a host is unknown"),
                Hierarchy.obstacle(unknown).get());
        assertFalse(unknown.subset(new int[] {1, 2}).known());
        Hosts noNames = Hosts.of(uneven, Arrays.asList("a", null, "b"));
        assertFalse(noNames.known());
        assertEquals(Optional.of("a"), noNames.name(0));
        assertEquals(Optional.empty(), noNames.name(1));
        assertEquals(Optional.empty(), noNames.placingNames());
        List<Transport> three = LocalTransport.group(3, Duration.ofSeconds(5));
        try (FlatCollectives flat = new FlatCollectives(three.get(1))) {
            assertSame(flat, Hierarchy.select(flat, three.get(1), unknown, ON));
        }
        three.forEach(Transport::close);
        assertNotEquals(unknown.toString(), sameName.toString());
    }

    /** Every rank tells its host name at start; the hosts every rank agrees on are the real ones. */
    @Test
    void ranksAgreeOnTheirHostsByName() {
        List<String> names = List.of("a", "node-b", "node-b", "c.example.org", "c.example.org");
        List<Topology> placed = Placement.of(names);
        List<Hosts> agreed = Ranks.runOps(5, t -> new FlatCollectives(t),
                c -> Hierarchy.agree(c, placed.get(c.rank()), names.get(c.rank()), AlgorithmSettings.defaults()));
        for (Hosts h : agreed) {
            assertEquals("Hosts[0, 1, 1, 2, 2]", h.toString());
            // Every rank holds every rank's host name, for JobPlacement and for the messages that name a rank.
            assertEquals(Optional.of(names), h.placingNames());
            for (int r = 0; r < names.size(); r++) {
                assertEquals(Optional.of(names.get(r)), h.name(r));
            }
        }
    }
}
