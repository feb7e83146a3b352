package io.kolo.launcher;

import java.util.ArrayList;
import java.util.List;

/** Which rank runs where, with Horovod's local and cross coordinates. */
final class Topology {

    /** How ranks are spread over hosts, as mpirun's {@code --map-by}. */
    enum Mapping {
        /** Fill each host's slots before the next host (mpirun's default). */
        SLOT,
        /** One rank per host in turn, round-robin, skipping hosts whose slots are full. */
        NODE
    }

    /**
     * One rank's place. Cross rank is the index of this host among the hosts that have a rank with the same
     * local rank, and cross size the number of such hosts, exactly as Horovod defines them, so code written
     * for hierarchical allreduce under Horovod means the same thing here.
     */
    record Slot(int rank, int size, int localRank, int localSize, int crossRank, int crossSize, String host) {
    }

    private Topology() {
    }

    /** Packs ranks host by host in the given order, as mpirun's default by-slot mapping does. */
    static List<Slot> assign(List<Hosts.Host> hosts, int np) {
        return assign(hosts, np, Mapping.SLOT, false);
    }

    /**
     * Places {@code np} ranks on {@code hosts}. With {@code oversubscribe}, ranks beyond the slots go one per host in
     * turn, from the first host, as Open MPI places them.
     */
    static List<Slot> assign(List<Hosts.Host> hosts, int np, Mapping mapping, boolean oversubscribe) {
        int total = Hosts.totalSlots(hosts);
        if (np > total && !oversubscribe) {
            throw new UsageException("-np " + np + " needs " + np + " slots but the hosts provide only " + total
                    + " (" + String.join(",", hosts.stream().map(Hosts.Host::toString).toList()) + ")");
        }
        int[] hostOf = mapping == Mapping.SLOT ? bySlot(hosts, np) : byNode(hosts, np);
        int[] localSize = new int[hosts.size()];
        int[] localRank = new int[np];
        for (int r = 0; r < np; r++) {
            localRank[r] = localSize[hostOf[r]]++;
        }
        List<Slot> slots = new ArrayList<>(np);
        for (int r = 0; r < np; r++) {
            int h = hostOf[r];
            int crossRank = 0;
            int crossSize = 0;
            for (int other = 0; other < hosts.size(); other++) {
                if (localSize[other] > localRank[r]) {
                    if (other < h) {
                        crossRank++;
                    }
                    crossSize++;
                }
            }
            slots.add(new Slot(r, np, localRank[r], localSize[h], crossRank, crossSize, hosts.get(h).name()));
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
