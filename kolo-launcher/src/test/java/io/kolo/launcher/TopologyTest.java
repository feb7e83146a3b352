package io.kolo.launcher;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class TopologyTest {

    @Test
    void singleHost() {
        List<Topology.Slot> slots = Topology.assign(List.of(new Hosts.Host("localhost", 4)), 3);
        assertEquals(List.of(
                new Topology.Slot(0, 3, 0, 3, 0, 1, "localhost"),
                new Topology.Slot(1, 3, 1, 3, 0, 1, "localhost"),
                new Topology.Slot(2, 3, 2, 3, 0, 1, "localhost")), slots);
    }

    @Test
    void unevenHostsGetHorovodCrossRanks() {
        // a:2 b:1 c:2 -> ranks 0,1 on a; 2 on b; 3,4 on c. Local rank 1 exists only on a and c.
        List<Topology.Slot> slots = Topology.assign(
                List.of(new Hosts.Host("a", 2), new Hosts.Host("b", 1), new Hosts.Host("c", 2)), 5);
        assertEquals(List.of(
                new Topology.Slot(0, 5, 0, 2, 0, 3, "a"),
                new Topology.Slot(1, 5, 1, 2, 0, 2, "a"),
                new Topology.Slot(2, 5, 0, 1, 1, 3, "b"),
                new Topology.Slot(3, 5, 0, 2, 2, 3, "c"),
                new Topology.Slot(4, 5, 1, 2, 1, 2, "c")), slots);
    }

    @Test
    void ranksArePackedHostByHostAndUnusedHostsDoNotCount() {
        List<Topology.Slot> slots = Topology.assign(List.of(new Hosts.Host("a", 4), new Hosts.Host("b", 4)), 5);
        assertEquals(List.of("a", "a", "a", "a", "b"), slots.stream().map(Topology.Slot::host).toList());
        assertEquals(2, slots.getFirst().crossSize());
        assertEquals(1, slots.get(1).crossSize());
        List<Topology.Slot> onlyFirst = Topology.assign(List.of(new Hosts.Host("a", 4), new Hosts.Host("b", 4)), 2);
        assertTrue(onlyFirst.stream().allMatch(s -> s.host().equals("a") && s.crossSize() == 1));
    }

    @Test
    void tooFewSlotsShowsWhatWasFound() {
        UsageException e = assertThrows(UsageException.class,
                () -> Topology.assign(List.of(new Hosts.Host("a", 1), new Hosts.Host("b", 2)), 4));
        assertEquals("-np 4 needs 4 slots but the hosts provide only 3 (a:1,b:2)", e.getMessage());
    }

    @Test
    void byNodePlacesRanksRoundRobinSkippingFullHosts() {
        // a:1 b:3, by node: 0 on a, 1 on b, then a is full: 2 and 3 on b.
        List<Topology.Slot> slots = Topology.assign(List.of(new Hosts.Host("a", 1), new Hosts.Host("b", 3)), 4,
                Topology.Mapping.NODE, false);
        assertEquals(List.of(
                new Topology.Slot(0, 4, 0, 1, 0, 2, "a"),
                new Topology.Slot(1, 4, 0, 3, 1, 2, "b"),
                new Topology.Slot(2, 4, 1, 3, 0, 1, "b"),
                new Topology.Slot(3, 4, 2, 3, 0, 1, "b")), slots);
    }

    @Test
    void oversubscribedRanksGoOnePerHostInTurn() {
        List<Hosts.Host> hosts = List.of(new Hosts.Host("a", 1), new Hosts.Host("b", 1));
        assertEquals(List.of("a", "a", "b", "b"),
                Topology.assign(hosts, 4, Topology.Mapping.SLOT, true).stream().map(Topology.Slot::host).toList());
        assertEquals(List.of("a", "b", "a", "b", "a"),
                Topology.assign(hosts, 5, Topology.Mapping.NODE, true).stream().map(Topology.Slot::host).toList());
        UsageException e = assertThrows(UsageException.class,
                () -> Topology.assign(hosts, 3, Topology.Mapping.NODE, false));
        assertEquals("-np 3 needs 3 slots but the hosts provide only 2 (a:1,b:1)", e.getMessage());
    }
}
