package io.kolo.launcher;

import java.util.ArrayList;
import java.util.List;

/** Which rank runs where, with Horovod's local and cross coordinates. */
final class Topology {

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
        int total = Hosts.totalSlots(hosts);
        if (np > total) {
            throw new UsageException("-np " + np + " needs " + np + " slots but the hosts provide only " + total
                    + " (" + String.join(",", hosts.stream().map(Hosts.Host::toString).toList()) + ")");
        }
        List<Integer> perHost = new ArrayList<>();
        int left = np;
        for (Hosts.Host h : hosts) {
            int n = Math.min(left, h.slots());
            if (n == 0) {
                break;
            }
            perHost.add(n);
            left -= n;
        }
        List<Slot> slots = new ArrayList<>(np);
        int rank = 0;
        for (int hi = 0; hi < perHost.size(); hi++) {
            int localSize = perHost.get(hi);
            for (int local = 0; local < localSize; local++) {
                int crossRank = 0;
                int crossSize = 0;
                for (int other = 0; other < perHost.size(); other++) {
                    if (perHost.get(other) > local) {
                        if (other < hi) {
                            crossRank++;
                        }
                        crossSize++;
                    }
                }
                slots.add(new Slot(rank++, np, local, localSize, crossRank, crossSize, hosts.get(hi).name()));
            }
        }
        return slots;
    }
}
