package io.kolo.bootstrap;

import io.kolo.Topology;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Where every rank sits, from the host of every rank, as Horovod defines it: a rank's local rank is its index among
 * the ranks on its host (in rank order) and its local size their number; its cross size is the number of ranks with
 * its local rank, and its cross rank how many of those have a smaller rank. The one placement of Kolo: {@code kolo
 * run} (every {@code --map-by}, elastic, {@code --nnodes}), {@code WorkerEnvironment} and the readers of other
 * launchers' variables ({@link JobEnvironment}) all place ranks with it, so code written against Horovod's
 * coordinates means the same under each. A process manager places ranks where it likes: a host's ranks need not be
 * consecutive, nor hosts hold equally many.
 */
public final class Placement {
    private Placement() {
    }

    /**
     * Every rank's topology, in rank order, for a job of {@code hostOfEachRank.size()} ranks; equal entries share a
     * host (a name, an address, any key that tells hosts apart).
     *
     * @throws IllegalArgumentException when the list is empty or an entry is null or blank (one line, naming the rank)
     */
    public static List<Topology> of(List<String> hostOfEachRank) {
        Objects.requireNonNull(hostOfEachRank, "hostOfEachRank");
        int size = hostOfEachRank.size();
        if (size == 0) {
            throw new IllegalArgumentException("the list of every rank's host is empty: a job needs at least one rank");
        }
        Map<String, int[]> onHost = new HashMap<>();
        int[] localRank = new int[size];
        int[][] localSize = new int[size][];
        for (int r = 0; r < size; r++) {
            String h = hostOfEachRank.get(r);
            if (h == null || h.isBlank()) {
                throw new IllegalArgumentException("the host of rank " + r + " is " + (h == null ? "null" : "blank")
                        + ": expected a host name or IP address for every rank");
            }
            int[] count = onHost.computeIfAbsent(h, k -> new int[1]);
            localRank[r] = count[0]++;
            localSize[r] = count;
        }
        // Ranks with the same local rank, in rank order: the cross rank is the position among them.
        int[] withLocalRank = new int[size];
        int[] crossRank = new int[size];
        for (int r = 0; r < size; r++) {
            crossRank[r] = withLocalRank[localRank[r]]++;
        }
        List<Topology> out = new ArrayList<>(size);
        for (int r = 0; r < size; r++) {
            out.add(new Topology(r, size, localRank[r], localSize[r][0], crossRank[r], withLocalRank[localRank[r]]));
        }
        return List.copyOf(out);
    }

    /**
     * As {@link #of}, for a job whose hosts run {@code ranksPerHost.get(h)} consecutive ranks each, host after host
     * (mpirun's and Slurm's default block placement).
     */
    public static List<Topology> packed(List<Integer> ranksPerHost) {
        List<String> hosts = new ArrayList<>();
        for (int h = 0; h < ranksPerHost.size(); h++) {
            for (int i = 0; i < ranksPerHost.get(h); i++) {
                hosts.add(Integer.toString(h));
            }
        }
        return of(hosts);
    }
}
