package io.kolo.launcher.job;


import io.kolo.Topology;
import io.kolo.bootstrap.Placement;

import java.util.ArrayList;
import java.util.List;

/** Which rank runs on which host; each rank's local and cross coordinates are Horovod's ({@link Placement}). */
public final class RankMap {

    /** How ranks are spread over hosts, as mpirun's {@code --map-by}. */
    public enum Mapping {
        /** Fill each host's slots before the next host (mpirun's default). */
        SLOT,
        /** One rank per host in turn, round-robin, skipping hosts whose slots are full. */
        NODE
    }

    /** One rank's place: its coordinates in the job and the host it runs on. */
    public record Slot(Topology topology, String host) {
        public int rank() {
            return topology.rank();
        }
    }

    private RankMap() {
    }

    /** Packs ranks host by host in the given order, as mpirun's default by-slot mapping does. */
    public static List<Slot> assign(List<Hosts.Host> hosts, int np) {
        return assign(hosts, np, Mapping.SLOT, false);
    }

    /**
     * Places {@code np} ranks on {@code hosts}. With {@code oversubscribe}, ranks beyond the slots go one per host in
     * turn, from the first host, as Open MPI places them.
     */
    public static List<Slot> assign(List<Hosts.Host> hosts, int np, Mapping mapping, boolean oversubscribe) {
        int total = Hosts.totalSlots(hosts);
        if (np > total && !oversubscribe) {
            throw new UsageException("-np " + np + " needs " + np + " slots but the hosts provide only " + total
                    + " (" + String.join(",", hosts.stream().map(Hosts.Host::toString).toList()) + ")");
        }
        int[] hostOf = mapping == Mapping.SLOT ? bySlot(hosts, np) : byNode(hosts, np);
        List<String> hostOfEachRank = new ArrayList<>(np);
        for (int r = 0; r < np; r++) {
            hostOfEachRank.add(hosts.get(hostOf[r]).name());
        }
        List<Topology> placed = Placement.of(hostOfEachRank);
        List<Slot> slots = new ArrayList<>(np);
        for (int r = 0; r < np; r++) {
            slots.add(new Slot(placed.get(r), hostOfEachRank.get(r)));
        }
        return slots;
    }

    /** Ranks fill host after host; extras (oversubscribed) add one per host in turn, keeping each host's ranks together. */
    private static int[] bySlot(List<Hosts.Host> hosts, int np) {
        int[] count = new int[hosts.size()];
        int left = np;
        for (int h = 0; h < hosts.size() && left > 0; h++) {
            count[h] = Math.min(left, hosts.get(h).slots());
            left -= count[h];
        }
        for (int h = 0; left > 0; h = (h + 1) % hosts.size()) {
            count[h]++;
            left--;
        }
        int[] hostOf = new int[np];
        int r = 0;
        for (int h = 0; h < hosts.size(); h++) {
            for (int i = 0; i < count[h]; i++) {
                hostOf[r++] = h;
            }
        }
        return hostOf;
    }

    /** Rank r on the next host in turn that has a free slot; once every slot is used, on every host in turn. */
    private static int[] byNode(List<Hosts.Host> hosts, int np) {
        int[] used = new int[hosts.size()];
        int[] hostOf = new int[np];
        int total = Hosts.totalSlots(hosts);
        int h = 0;
        for (int r = 0; r < np; r++) {
            boolean full = r >= total;
            while (!full && used[h] >= hosts.get(h).slots()) {
                h = (h + 1) % hosts.size();
            }
            hostOf[r] = h;
            used[h]++;
            h = (h + 1) % hosts.size();
        }
        return hostOf;
    }
}
