package io.kolo.launcher.job;


import io.kolo.Topology;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class RankMapTest {

    private static RankMap.Slot slot(int rank, int size, int localRank, int localSize, int crossRank, int crossSize,
                                     String host) {
        return new RankMap.Slot(new Topology(rank, size, localRank, localSize, crossRank, crossSize), host);
    }

    @Test
    void singleHost() {
        List<RankMap.Slot> slots = RankMap.assign(List.of(new Hosts.Host("localhost", 4)), 3);
        assertEquals(List.of(
                slot(0, 3, 0, 3, 0, 1, "localhost"),
                slot(1, 3, 1, 3, 0, 1, "localhost"),
                slot(2, 3, 2, 3, 0, 1, "localhost")), slots);
    }

    @Test
    void unevenHostsGetHorovodCrossRanks() {
        // a:2 b:1 c:2 -> ranks 0,1 on a; 2 on b; 3,4 on c. Local rank 1 exists only on a and c.
        List<RankMap.Slot> slots = RankMap.assign(
                List.of(new Hosts.Host("a", 2), new Hosts.Host("b", 1), new Hosts.Host("c", 2)), 5);
        assertEquals(List.of(
                slot(0, 5, 0, 2, 0, 3, "a"),
                slot(1, 5, 1, 2, 0, 2, "a"),
                slot(2, 5, 0, 1, 1, 3, "b"),
                slot(3, 5, 0, 2, 2, 3, "c"),
                slot(4, 5, 1, 2, 1, 2, "c")), slots);
    }

    @Test
    void ranksArePackedHostByHostAndUnusedHostsDoNotCount() {
        List<RankMap.Slot> slots = RankMap.assign(List.of(new Hosts.Host("a", 4), new Hosts.Host("b", 4)), 5);
        assertEquals(List.of("a", "a", "a", "a", "b"), slots.stream().map(RankMap.Slot::host).toList());
        assertEquals(2, slots.getFirst().topology().crossSize());
        assertEquals(1, slots.get(1).topology().crossSize());
        List<RankMap.Slot> onlyFirst = RankMap.assign(List.of(new Hosts.Host("a", 4), new Hosts.Host("b", 4)), 2);
        assertTrue(onlyFirst.stream().allMatch(s -> s.host().equals("a") && s.topology().crossSize() == 1));
    }

    @Test
    void tooFewSlotsShowsWhatWasFound() {
        UsageException e = assertThrows(UsageException.class,
                () -> RankMap.assign(List.of(new Hosts.Host("a", 1), new Hosts.Host("b", 2)), 4));
        assertEquals("-np 4 needs 4 slots but the hosts provide only 3 (a:1,b:2)", e.getMessage());
    }

    @Test
    void byNodePlacesRanksRoundRobinSkippingFullHosts() {
        // a:1 b:3, by node: 0 on a, 1 on b, then a is full: 2 and 3 on b.
        List<RankMap.Slot> slots = RankMap.assign(List.of(new Hosts.Host("a", 1), new Hosts.Host("b", 3)), 4,
                RankMap.Mapping.NODE, false);
        assertEquals(List.of(
                slot(0, 4, 0, 1, 0, 2, "a"),
                slot(1, 4, 0, 3, 1, 2, "b"),
                slot(2, 4, 1, 3, 0, 1, "b"),
                slot(3, 4, 2, 3, 0, 1, "b")), slots);
    }

    /**
     * Before: cross ranks counted hosts in the host list's order, so a rank of an earlier host placed after a later
     * host's got the smaller cross rank (here rank 3 on a: 0, rank 2 on b: 1); Horovod orders them by rank.
     */
    @Test
    void oversubscribedByNodeCrossRanksFollowRankOrder() {
        // a:1 b:2, by node, 4 ranks: 0 on a, 1 on b, 2 on b (a full), then every slot used: 3 on a.
        List<RankMap.Slot> slots = RankMap.assign(List.of(new Hosts.Host("a", 1), new Hosts.Host("b", 2)), 4,
                RankMap.Mapping.NODE, true);
        assertEquals(List.of(
                slot(0, 4, 0, 2, 0, 2, "a"),
                slot(1, 4, 0, 2, 1, 2, "b"),
                slot(2, 4, 1, 2, 0, 2, "b"),
                slot(3, 4, 1, 2, 1, 2, "a")), slots);
    }

    @Test
    void everyMappingPlacesRanksAsHorovodWould() {
        long seed = new Random().nextLong();
        Random random = new Random(seed);
        for (int trial = 0; trial < 200; trial++) {
            List<Hosts.Host> hosts = new ArrayList<>();
            for (int h = 1 + random.nextInt(5); h > 0; h--) {
                hosts.add(new Hosts.Host("h" + hosts.size(), 1 + random.nextInt(4)));
            }
            int np = 1 + random.nextInt(Hosts.totalSlots(hosts) * 2);
            RankMap.Mapping mapping = random.nextBoolean() ? RankMap.Mapping.SLOT : RankMap.Mapping.NODE;
            List<RankMap.Slot> slots = RankMap.assign(hosts, np, mapping, true);
            List<String> where = slots.stream().map(RankMap.Slot::host).toList();
            assertEquals(horovod(where), slots.stream().map(RankMap.Slot::topology).toList(),
                    mapping + " " + hosts + " -np " + np + " (seed " + seed + ")");
        }
    }

    /** Horovod's definition, the plain way: local from the host's ranks, cross from the ranks of equal local rank. */
    private static List<Topology> horovod(List<String> hosts) {
        int n = hosts.size();
        int[] local = new int[n];
        int[] localSize = new int[n];
        for (int r = 0; r < n; r++) {
            for (int s = 0; s < n; s++) {
                if (hosts.get(s).equals(hosts.get(r))) {
                    localSize[r]++;
                    local[r] += s < r ? 1 : 0;
                }
            }
        }
        List<Topology> out = new ArrayList<>();
        for (int r = 0; r < n; r++) {
            int crossRank = 0;
            int crossSize = 0;
            for (int s = 0; s < n; s++) {
                if (local[s] == local[r]) {
                    crossSize++;
                    crossRank += s < r ? 1 : 0;
                }
            }
            out.add(new Topology(r, n, local[r], localSize[r], crossRank, crossSize));
        }
        return out;
    }

    @Test
    void oversubscribedRanksGoOnePerHostInTurn() {
        List<Hosts.Host> hosts = List.of(new Hosts.Host("a", 1), new Hosts.Host("b", 1));
        assertEquals(List.of("a", "a", "b", "b"),
                RankMap.assign(hosts, 4, RankMap.Mapping.SLOT, true).stream().map(RankMap.Slot::host).toList());
        assertEquals(List.of("a", "b", "a", "b", "a"),
                RankMap.assign(hosts, 5, RankMap.Mapping.NODE, true).stream().map(RankMap.Slot::host).toList());
        UsageException e = assertThrows(UsageException.class,
                () -> RankMap.assign(hosts, 3, RankMap.Mapping.NODE, false));
        assertEquals("-np 3 needs 3 slots but the hosts provide only 2 (a:1,b:1)", e.getMessage());
    }
}
