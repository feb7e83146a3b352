package io.kolo.spark;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** Local and cross ranks from the hosts Spark placed the barrier tasks on, in whatever order it placed them. */
class PlacementTest {

    @Test
    void ranksOnOneHostAreLocalRanksInRankOrderAndHostsCountInOrderOfTheirFirstRank() {
        List<String> hosts = List.of("b", "a", "b", "c", "a");
        assertEquals(new Placement(0, 5, 0, 2, 0, 3, "b"), Placement.of(hosts, 0));
        assertEquals(new Placement(1, 5, 0, 2, 1, 3, "a"), Placement.of(hosts, 1));
        assertEquals(new Placement(2, 5, 1, 2, 0, 3, "b"), Placement.of(hosts, 2));
        assertEquals(new Placement(3, 5, 0, 1, 2, 3, "c"), Placement.of(hosts, 3));
        assertEquals(new Placement(4, 5, 1, 2, 1, 3, "a"), Placement.of(hosts, 4));
    }

    @Test
    void theHostOfATaskAddress() {
        assertEquals("10.0.0.7", Placement.hostOf("10.0.0.7:41234"));
        assertEquals("node-3.example", Placement.hostOf("node-3.example:7077"));
        assertEquals("fe80::1", Placement.hostOf("[fe80::1]:7077"));
        assertEquals("fe80::1", Placement.hostOf("fe80::1"));
        assertEquals("localhost", Placement.hostOf("localhost"));
    }
}
