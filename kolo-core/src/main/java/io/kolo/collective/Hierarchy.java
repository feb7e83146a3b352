package io.kolo.collective;

import io.kolo.KoloException;
import io.kolo.Topology;
import io.kolo.bootstrap.LazyLogger;
import io.kolo.transport.Transport;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Chooses between the flat and the hierarchical collectives from every rank's topology. Every rank sees the same
 * list of topologies (exchanged once at start), so every rank makes the same choice; ranks choosing differently
 * would run different algorithms and hang.
 */
public final class Hierarchy {

    private static final System.Logger LOG = LazyLogger.of(Hierarchy.class);
    private static final int INTS_PER_RANK = 8;

    private Hierarchy() {
    }

    /**
     * Control plane, once per job: every rank's topology and settings, in rank order, on every rank.
     *
     * @throws KoloException on every rank when the ranks' algorithm settings differ
     */
    public static List<Topology> agree(CollectiveOps flat, Topology mine, AlgorithmSettings settings) {
        ByteBuffer out = ByteBuffer.allocate(INTS_PER_RANK * Integer.BYTES);
        out.putInt(mine.rank()).putInt(mine.size()).putInt(mine.localRank()).putInt(mine.localSize())
                .putInt(mine.crossRank()).putInt(mine.crossSize())
                .putInt(settings.hierarchicalAllreduce().ordinal()).putInt(settings.hierarchicalAllgather().ordinal());
        byte[][] all = flat.gather(out.array(), 0);
        byte[] table = null;
        if (flat.rank() == 0) {
            ByteBuffer joined = ByteBuffer.allocate(all.length * INTS_PER_RANK * Integer.BYTES);
            for (byte[] b : all) {
                joined.put(b);
            }
            table = joined.array();
        }
        ByteBuffer in = ByteBuffer.wrap(flat.broadcast(table, 0));
        List<Topology> topologies = new ArrayList<>(flat.size());
        AlgorithmSettings.Mode[] modes = AlgorithmSettings.Mode.values();
        AlgorithmSettings rank0 = null;
        for (int r = 0; r < flat.size(); r++) {
            topologies.add(new Topology(in.getInt(), in.getInt(), in.getInt(), in.getInt(), in.getInt(), in.getInt()));
            AlgorithmSettings.Mode allreduce = modes[in.getInt()];
            AlgorithmSettings.Mode allgather = modes[in.getInt()];
            if (r == 0) {
                rank0 = new AlgorithmSettings(allreduce, allgather);
            } else if (allreduce != rank0.hierarchicalAllreduce() || allgather != rank0.hierarchicalAllgather()) {
                // Compared with rank 0's, so that every rank reports the same mismatch; field by field, because a
                // record's equals links an invokedynamic call site on its first call, which a starting rank pays
                // for in tens of milliseconds (docs/performance.md, "First run").
                AlgorithmSettings theirs = new AlgorithmSettings(allreduce, allgather);
                throw new KoloException("rank " + r + " runs with " + theirs + " but rank 0 with " + rank0
                        + ": set KOLO_HIERARCHICAL_ALLREDUCE and KOLO_HIERARCHICAL_ALLGATHER the same on every rank");
            }
        }
        return topologies;
    }

    /**
     * The collectives for this rank: hierarchical when the settings allow it and the hosts are homogeneous, flat
     * otherwise. Takes ownership of {@code flat}.
     *
     * @param everyRank every rank's topology in rank order (from {@link #agree}, or known up front in one JVM)
     */
    public static CollectiveOps select(Collectives flat, Transport transport, List<Topology> everyRank,
                                       AlgorithmSettings settings) {
        return select(flat, transport, everyRank, settings, false);
    }

    /**
     * As {@link #select(Collectives, Transport, List, AlgorithmSettings)}; with {@code switchable}, the hierarchical
     * collectives are built whenever the topology allows them, even with both settings off, so that the autotuner can
     * turn them on and off while the job runs ({@link CollectiveOps#hierarchical}).
     */
    public static CollectiveOps select(Collectives flat, Transport transport, List<Topology> everyRank,
                                       AlgorithmSettings settings, boolean switchable) {
        boolean allreduce = settings.hierarchicalAllreduce() != AlgorithmSettings.Mode.OFF;
        boolean allgather = settings.hierarchicalAllgather() != AlgorithmSettings.Mode.OFF;
        if (!allreduce && !allgather && !(switchable && obstacle(everyRank).isEmpty())) {
            return flat;
        }
        Optional<String> obstacle = obstacle(everyRank);
        if (obstacle.isPresent()) {
            boolean asked = settings.hierarchicalAllreduce() == AlgorithmSettings.Mode.ON
                    || settings.hierarchicalAllgather() == AlgorithmSettings.Mode.ON;
            // On one host that is what anyone expects; saying so at DEBUG would look the logging backend up at
            // every start (LazyLogger).
            if (asked || everyRank.getFirst().crossSize() > 1) {
                LOG.log(asked && flat.rank() == 0 ? System.Logger.Level.WARNING : System.Logger.Level.DEBUG,
                        "hierarchical collectives not used: {0}", obstacle.get());
            }
            return flat;
        }
        Topology me = everyRank.get(flat.rank());
        return new HierarchicalCollectives(flat, transport, me.localSize(), me.crossSize(), allreduce, allgather);
    }

    /**
     * The collectives of a process set: the flat algorithms over {@code members} of {@code parent} renumbered
     * 0..k-1, hierarchical when the settings allow it and the members are spread evenly over their hosts. Needs no
     * messages, so every member can build it at the same moment without waiting for the others.
     *
     * @param members   the set's ranks in the job, ascending; must include the parent's own rank
     * @param everyRank every job rank's topology, in rank order
     */
    public static CollectiveOps forSubset(Transport parent, int[] members, List<Topology> everyRank,
                                          AlgorithmSettings settings, long smallMessageBytes) {
        SubgroupTransport t = new SubgroupTransport(parent, members);
        return select(new Collectives(t, smallMessageBytes), t, subsetTopologies(members, everyRank), settings);
    }

    /** Each member's place in the set: its host's position among the members' hosts, its own among its host's members. */
    static List<Topology> subsetTopologies(int[] members, List<Topology> everyRank) {
        List<Integer> hosts = new ArrayList<>();
        int[] hostOf = new int[members.length];
        for (int i = 0; i < members.length; i++) {
            int host = everyRank.get(members[i]).crossRank();
            int at = hosts.indexOf(host);
            if (at < 0) {
                at = hosts.size();
                hosts.add(host);
            }
            hostOf[i] = at;
        }
        int[] perHost = new int[hosts.size()];
        int[] localRank = new int[members.length];
        for (int i = 0; i < members.length; i++) {
            localRank[i] = perHost[hostOf[i]]++;
        }
        List<Topology> out = new ArrayList<>(members.length);
        for (int i = 0; i < members.length; i++) {
            out.add(new Topology(i, members.length, localRank[i], perHost[hostOf[i]], hostOf[i], hosts.size()));
        }
        return out;
    }

    /**
     * Why the ranks cannot run the hierarchical algorithms, or empty when they can: there must be several hosts,
     * each with the same number (more than one) of ranks, packed host by host
     * ({@code rank = crossRank * localSize + localRank}), as every launcher Kolo knows assigns them.
     */
    static Optional<String> obstacle(List<Topology> everyRank) {
        int size = everyRank.size();
        Topology first = everyRank.getFirst();
        int localSize = first.localSize();
        int crossSize = first.crossSize();
        if (localSize < 2 || crossSize < 2) {
            return Optional.of("needs several hosts with several ranks each, this job has " + crossSize
                    + " host(s) with " + localSize + " rank(s) on rank 0's host");
        }
        if ((long) localSize * crossSize != size) {
            return Optional.of("hosts run different numbers of ranks (" + crossSize + " hosts x " + localSize
                    + " local ranks != " + size + " ranks)");
        }
        for (int r = 0; r < size; r++) {
            Topology t = everyRank.get(r);
            if (t.rank() != r || t.localSize() != localSize || t.crossSize() != crossSize
                    || t.crossRank() * localSize + t.localRank() != r) {
                return Optional.of("rank " + r + " has " + t + ", not packed host by host like rank 0 (local size "
                        + localSize + ", cross size " + crossSize + ")");
            }
        }
        return Optional.empty();
    }
}
