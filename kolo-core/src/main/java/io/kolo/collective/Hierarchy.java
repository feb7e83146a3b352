package io.kolo.collective;

import io.kolo.KoloException;
import io.kolo.Topology;
import io.kolo.bootstrap.LazyLogger;
import io.kolo.transport.Transport;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
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
     * Control plane, once per job: every rank's topology, host name and settings, in rank order, on every rank; from
     * them the job's {@link Hosts}.
     *
     * @param hostName the name of the host this rank was placed on ({@code KOLO_HOSTNAME}, or the machine's own), or
     *                 null when it has none
     * @throws KoloException on every rank when the ranks' algorithm settings differ
     */
    public static Hosts agree(CollectiveOps flat, Topology mine, String hostName, AlgorithmSettings settings) {
        byte[] name = hostName == null ? new byte[0] : hostName.getBytes(StandardCharsets.UTF_8);
        ByteBuffer out = ByteBuffer.allocate((INTS_PER_RANK + 1) * Integer.BYTES + name.length);
        out.putInt(mine.rank()).putInt(mine.size()).putInt(mine.localRank()).putInt(mine.localSize())
                .putInt(mine.crossRank()).putInt(mine.crossSize())
                .putInt(settings.hierarchicalAllreduce().ordinal()).putInt(settings.hierarchicalAllgather().ordinal())
                .putInt(name.length).put(name);
        byte[][] all = flat.gather(out.array(), 0);
        byte[] table = null;
        if (flat.rank() == 0) {
            int bytes = 0;
            for (byte[] b : all) {
                bytes += b.length;
            }
            ByteBuffer joined = ByteBuffer.allocate(bytes);
            for (byte[] b : all) {
                joined.put(b);
            }
            table = joined.array();
        }
        ByteBuffer in = ByteBuffer.wrap(flat.broadcast(table, 0));
        List<Topology> topologies = new ArrayList<>(flat.size());
        List<String> names = new ArrayList<>(flat.size());
        AlgorithmSettings.Mode[] modes = AlgorithmSettings.Mode.values();
        AlgorithmSettings rank0 = null;
        for (int r = 0; r < flat.size(); r++) {
            topologies.add(new Topology(in.getInt(), in.getInt(), in.getInt(), in.getInt(), in.getInt(), in.getInt()));
            AlgorithmSettings.Mode allreduce = modes[in.getInt()];
            AlgorithmSettings.Mode allgather = modes[in.getInt()];
            byte[] theirName = new byte[in.getInt()];
            in.get(theirName);
            names.add(theirName.length == 0 ? null : new String(theirName, StandardCharsets.UTF_8));
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
        return Hosts.of(topologies, names);
    }

    /**
     * The collectives for this rank: hierarchical when the settings allow it and the hosts are homogeneous, flat
     * otherwise. Takes ownership of {@code flat}.
     *
     * @param hosts every rank's host (from {@link #agree}, or known up front in one JVM)
     */
    public static CollectiveOps select(FlatCollectives flat, Transport transport, Hosts hosts,
                                       AlgorithmSettings settings) {
        return select(flat, transport, hosts, settings, false);
    }

    /**
     * As {@link #select(FlatCollectives, Transport, Hosts, AlgorithmSettings)}; with {@code switchable}, the
     * hierarchical collectives are built whenever the hosts allow them, even with both settings off, so that the
     * autotuner can turn them on and off while the job runs ({@link CollectiveOps#hierarchical}).
     */
    public static CollectiveOps select(FlatCollectives flat, Transport transport, Hosts hosts,
                                       AlgorithmSettings settings, boolean switchable) {
        boolean allreduce = settings.hierarchicalAllreduce() != AlgorithmSettings.Mode.OFF;
        boolean allgather = settings.hierarchicalAllgather() != AlgorithmSettings.Mode.OFF;
        if (!allreduce && !allgather && !(switchable && obstacle(hosts).isEmpty())) {
            return flat;
        }
        Optional<String> obstacle = obstacle(hosts);
        if (obstacle.isPresent()) {
            boolean asked = settings.hierarchicalAllreduce() == AlgorithmSettings.Mode.ON
                    || settings.hierarchicalAllgather() == AlgorithmSettings.Mode.ON;
            // On one host that is what anyone expects; saying so at DEBUG would look the logging backend up at
            // every start (LazyLogger).
            if (asked || !hosts.known() || hosts.count() > 1) {
                LOG.log(asked && flat.rank() == 0 ? System.Logger.Level.WARNING : System.Logger.Level.DEBUG,
                        "hierarchical collectives not used: {0}", obstacle.get());
            }
            return flat;
        }
        return new HierarchicalCollectives(flat, transport, hosts.size() / hosts.count(), hosts.count(), allreduce,
                allgather);
    }

    /**
     * The collectives of a process set: the flat algorithms over {@code members} of {@code parent} renumbered
     * 0..k-1, hierarchical when the settings allow it and the members are spread evenly over their hosts. Needs no
     * messages, so every member can build it at the same moment without waiting for the others.
     *
     * @param members the set's ranks in the job, ascending; must include the parent's own rank
     * @param hosts   every job rank's host
     */
    public static CollectiveOps forSubset(Transport parent, int[] members, Hosts hosts, AlgorithmSettings settings,
                                          long smallMessageBytes) {
        SubgroupTransport t = new SubgroupTransport(parent, members);
        return select(new FlatCollectives(t, smallMessageBytes), t, hosts.subset(members), settings);
    }

    /**
     * Why the ranks cannot run the hierarchical algorithms, or empty when they can: there must be several hosts,
     * each with the same number (more than one) of ranks, packed host by host
     * ({@code rank = host * ranksPerHost + localRank}), as every launcher Kolo knows assigns them by default.
     */
    static Optional<String> obstacle(Hosts hosts) {
        if (!hosts.known()) {
            return Optional.of(hosts.whyUnknown());
        }
        int size = hosts.size();
        int[] onHost = new int[hosts.count()];
        for (int r = 0; r < size; r++) {
            onHost[hosts.host(r)]++;
        }
        int perHost = onHost[0];
        if (hosts.count() < 2) {
            return Optional.of("needs several hosts with several ranks each, this job has one host with " + perHost
                    + " rank(s)");
        }
        for (int h = 1; h < onHost.length; h++) {
            if (onHost[h] != perHost) {
                return Optional.of("hosts run different numbers of ranks (" + perHost + " on host 0, " + onHost[h]
                        + " on host " + h + ")");
            }
        }
        if (perHost < 2) {
            return Optional.of("needs several hosts with several ranks each, this job has " + hosts.count()
                    + " hosts with one rank each");
        }
        for (int r = 0; r < size; r++) {
            if (hosts.host(r) != r / perHost) {
                return Optional.of("rank " + r + " runs on host " + hosts.host(r) + ", not packed host by host ("
                        + perHost + " ranks per host)");
            }
        }
        return Optional.empty();
    }
}
