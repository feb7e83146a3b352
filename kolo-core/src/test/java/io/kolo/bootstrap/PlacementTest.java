package io.kolo.bootstrap;

import io.kolo.Topology;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** The one placement against Horovod's definition, written out here the plain way. */
class PlacementTest {

    @Test
    void ranksOnUnevenNonContiguousHostsGetHorovodsCoordinates() {
        // Before: rank 4 got cross rank 1 of 3 (its host a's index among the hosts b, a, c); Horovod's cross size
        // counts the ranks with local rank 1 (ranks 2 and 4).
        assertEquals(List.of(
                new Topology(0, 5, 0, 2, 0, 3),
                new Topology(1, 5, 0, 2, 1, 3),
                new Topology(2, 5, 1, 2, 0, 2),
                new Topology(3, 5, 0, 1, 2, 3),
                new Topology(4, 5, 1, 2, 1, 2)), Placement.of(List.of("b", "a", "b", "c", "a")));
    }

    @Test
    void agreesWithHorovodsDefinitionOnRandomHostLists() {
        long seed = new Random().nextLong();
        Random random = new Random(seed);
        for (int trial = 0; trial < 200; trial++) {
            int hosts = 1 + random.nextInt(6);
            int size = 1 + random.nextInt(24);
            List<String> hostOfEachRank = new ArrayList<>();
            for (int r = 0; r < size; r++) {
                // Skewed, so that hosts hold very different numbers of ranks, in no order.
                int h = (int) Math.floor(hosts * Math.pow(random.nextDouble(), 1 + random.nextInt(3)));
                hostOfEachRank.add("node-" + (char) ('a' + h));
            }
            assertEquals(horovod(hostOfEachRank), Placement.of(hostOfEachRank),
                    "hosts " + hostOfEachRank + " (seed " + seed + ", trial " + trial + ")");
        }
    }

    @Test
    void packedHostsAreHostAfterHost() {
        assertEquals(Placement.of(List.of("x", "x", "x", "y", "y", "z")), Placement.packed(List.of(3, 2, 1)));
    }

    @Test
    void anEmptyListOrABlankHostIsOneLine() {
        assertEquals("the list of every rank's host is empty: a job needs at least one rank",
                assertThrows(IllegalArgumentException.class, () -> Placement.of(List.of())).getMessage());
        assertEquals("the host of rank 1 is blank: expected a host name or IP address for every rank",
                assertThrows(IllegalArgumentException.class, () -> Placement.of(List.of("a", " "))).getMessage());
        assertEquals("the host of rank 0 is null: expected a host name or IP address for every rank",
                assertThrows(IllegalArgumentException.class,
                        () -> Placement.of(Arrays.asList(null, "a"))).getMessage());
    }

    /**
     * Horovod: local rank and size from the ranks on the rank's host; cross size the number of ranks with its local
     * rank; cross rank how many of those have a smaller rank.
     */
    private static List<Topology> horovod(List<String> hosts) {
        int size = hosts.size();
        int[] local = new int[size];
        int[] localSize = new int[size];
        for (int r = 0; r < size; r++) {
            for (int s = 0; s < size; s++) {
                if (hosts.get(s).equals(hosts.get(r))) {
                    localSize[r]++;
                    if (s < r) {
                        local[r]++;
                    }
                }
            }
        }
        List<Topology> out = new ArrayList<>();
        for (int r = 0; r < size; r++) {
            int crossRank = 0;
            int crossSize = 0;
            for (int s = 0; s < size; s++) {
                if (local[s] == local[r]) {
                    crossSize++;
                    if (s < r) {
                        crossRank++;
                    }
                }
            }
            out.add(new Topology(r, size, local[r], localSize[r], crossRank, crossSize));
        }
        return out;
    }
}
