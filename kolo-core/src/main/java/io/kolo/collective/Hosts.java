package io.kolo.collective;

import io.kolo.Topology;
import io.kolo.bootstrap.Placement;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * Which host each rank of a job (or of a process set) runs on, the same on every rank: the hierarchical collectives
 * group ranks by it. Hosts are numbered in the order of their first rank.
 *
 * <p>Horovod's cross rank is not a host's number once hosts run different numbers of ranks (hosts {@code a:1,
 * b:2}: rank 2, the second on {@code b}, has cross rank 0, as rank 0 on {@code a} has), so the hosts come from the
 * names the ranks were placed by. Names that group the ranks otherwise than their local ranks say (containers of one
 * machine sharing a name, a launch that set the local ranks by hand) are not used: then only ranks packed evenly host
 * by host ({@code rank = crossRank * localSize + localRank}) have known hosts, and any other job runs the flat
 * algorithms rather than guess.
 */
public final class Hosts {

    /** Each rank's host, or null when unknown. */
    private final int[] hostOf;
    private final int count;
    /** Why the hosts are unknown; null when known. */
    private final String unknown;
    private final int size;
    /** Each rank's host name as it said it (null entries: none), or null when no names were exchanged. */
    private final List<String> names;
    /** Whether {@link #names} group the ranks as they were started, so that they say each rank's exact place. */
    private final boolean placedByNames;

    private Hosts(int[] hostOf, int count, String unknown, int size) {
        this(hostOf, count, unknown, size, null, false);
    }

    private Hosts(int[] hostOf, int count, String unknown, int size, List<String> names, boolean placedByNames) {
        this.hostOf = hostOf;
        this.count = count;
        this.unknown = unknown;
        this.size = size;
        this.names = names;
        this.placedByNames = placedByNames;
    }

    private Hosts named(List<String> theirNames) {
        return new Hosts(hostOf, count, unknown, size, theirNames, false);
    }

    /**
     * The hosts of a job whose rank {@code r} has topology {@code everyRank.get(r)} and was placed on host
     * {@code names.get(r)} (any key that tells hosts apart; null or blank when the rank knows none).
     */
    public static Hosts of(List<Topology> everyRank, List<String> names) {
        Objects.requireNonNull(everyRank, "everyRank");
        if (names.size() != everyRank.size()) {
            throw new IllegalArgumentException(names.size() + " host names for " + everyRank.size() + " ranks");
        }
        List<String> asSaid = java.util.Collections.unmodifiableList(new ArrayList<>(names));
        for (int r = 0; r < names.size(); r++) {
            if (names.get(r) == null || names.get(r).isBlank()) {
                return fromTopologies(everyRank, "rank " + r + " knows no name for its host").named(asSaid);
            }
        }
        List<Topology> placed = Placement.of(names);
        for (int r = 0; r < everyRank.size(); r++) {
            Topology t = everyRank.get(r);
            Topology p = placed.get(r);
            if (p.localRank() != t.localRank() || p.localSize() != t.localSize()) {
                return fromTopologies(everyRank, "the host names put rank " + r + " (on '" + names.get(r)
                        + "') at local rank " + p.localRank() + " of " + p.localSize() + ", not " + t.localRank()
                        + " of " + t.localSize() + " as it was started").named(asSaid);
            }
        }
        Map<String, Integer> numbers = new HashMap<>();
        int[] hostOf = new int[names.size()];
        for (int r = 0; r < hostOf.length; r++) {
            hostOf[r] = numbers.computeIfAbsent(names.get(r), k -> numbers.size());
        }
        return new Hosts(hostOf, numbers.size(), null, hostOf.length, asSaid, true);
    }

    /**
     * The hosts of a job known only by its ranks' topologies: known when the ranks are packed evenly host by host, as
     * then the cross rank is the host's number; unknown otherwise.
     */
    public static Hosts of(List<Topology> everyRank) {
        return fromTopologies(everyRank, "no host names are known");
    }

    private static Hosts fromTopologies(List<Topology> everyRank, String noNames) {
        int size = everyRank.size();
        int perHost = everyRank.getFirst().localSize();
        int[] hostOf = new int[size];
        for (int r = 0; r < size; r++) {
            Topology t = everyRank.get(r);
            if (size % perHost != 0 || t.rank() != r || t.localSize() != perHost || t.crossSize() != size / perHost
                    || t.crossRank() * perHost + t.localRank() != r) {
                return new Hosts(null, 0, noNames + ", and the ranks are not packed evenly host by host (rank " + r
                        + ": local rank " + t.localRank() + " of " + t.localSize() + ", cross rank " + t.crossRank()
                        + " of " + t.crossSize() + "), so which ranks share a host is unknown", size);
            }
            hostOf[r] = t.crossRank();
        }
        return new Hosts(hostOf, size / perHost, null, size);
    }

    /** Ranks on hosts numbered as given: {@code hostOf[r]} is rank {@code r}'s. */
    static Hosts numbered(int... hostOf) {
        int[] renumbered = new int[hostOf.length];
        List<Integer> seen = new ArrayList<>();
        for (int r = 0; r < hostOf.length; r++) {
            int at = seen.indexOf(hostOf[r]);
            if (at < 0) {
                at = seen.size();
                seen.add(hostOf[r]);
            }
            renumbered[r] = at;
        }
        return new Hosts(renumbered, seen.size(), null, hostOf.length);
    }

    /** The hosts of a process set's members ({@code members}: their ranks in this job, ascending), renumbered. */
    Hosts subset(int[] members) {
        if (hostOf == null) {
            return new Hosts(null, 0, unknown, members.length);
        }
        int[] theirs = new int[members.length];
        for (int i = 0; i < members.length; i++) {
            theirs[i] = hostOf[members[i]];
        }
        return numbered(theirs);
    }

    /**
     * The name of the host rank {@code rank} said it runs on, for messages that name the rank; empty when it said none
     * or no names were exchanged. Known on every rank from the start, so it needs no store when a rank stops answering.
     */
    public Optional<String> name(int rank) {
        if (names == null) {
            return Optional.empty();
        }
        String name = names.get(rank);
        return name == null || name.isBlank() ? Optional.empty() : Optional.of(name);
    }

    /**
     * Every rank's host name, in rank order, when the names group the ranks as they were started (so each rank's exact
     * place follows from them, see {@link Placement}); empty when some rank said none or they group the ranks otherwise.
     */
    public Optional<List<String>> placingNames() {
        return placedByNames ? Optional.of(names) : Optional.empty();
    }

    /** How many ranks. */
    public int size() {
        return size;
    }

    /** Whether every rank's host is known. */
    boolean known() {
        return hostOf != null;
    }

    /** Why the hosts are unknown; only when not {@link #known()}. */
    String whyUnknown() {
        return unknown;
    }

    /** Rank {@code rank}'s host; only when {@link #known()}. */
    int host(int rank) {
        return hostOf[rank];
    }

    /** How many hosts; only when {@link #known()}. */
    int count() {
        return count;
    }

    @Override
    public String toString() {
        return hostOf == null ? "Hosts[unknown: " + unknown + "]" : "Hosts" + Arrays.toString(hostOf);
    }
}
