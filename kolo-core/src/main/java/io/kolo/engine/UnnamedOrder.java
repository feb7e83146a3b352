package io.kolo.engine;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The coordinator's check that the ranks submit their unnamed ops in one order. An unnamed op's name counts ops of its
 * own kind ({@code allreduce.noname.3}), so a rank whose next unnamed op is an allreduce while another's is a
 * broadcast submits names that never meet: each would wait out {@code KOLO_TIMEOUT_SECONDS} for the other. Each
 * unnamed request also carries its place in its rank's order of unnamed ops ({@link Request#unnamed}).
 *
 * <p>The rule: when every rank that has not joined holds its unnamed op of some place among the requests still
 * waiting (none of them could be answered this round), and those ops are not all of one kind, the ranks broke the
 * order that unnamed ops must keep (the same on every rank), and those ops fail on every rank with one message naming
 * each rank's. An unnamed grouped allreduce takes one place for the whole group, and differs from a plain allreduce
 * or a group of another size in that place. Named ops are never compared by order: ranks may submit them in any order, from any thread.
 */
final class UnnamedOrder {
    /** The set's ranks in the job, by set rank. */
    private final int[] members;
    /** After the place in messages: which process set it belongs to ("" for the global set). */
    private final String where;

    UnnamedOrder(int[] members, String where) {
        this.members = members;
        this.where = where;
    }

    /**
     * The first place at which the waiting requests prove the ranks' orders differ, as an error response for every
     * rank's op of that place; null when there is none.
     *
     * @param waiting every waiting op's requests, by set rank (null where a rank has not submitted it)
     * @param joined  by set rank: whether the rank has joined (it submits nothing until the others join too)
     */
    Response check(Iterable<Request[]> waiting, boolean[] joined) {
        Map<Long, List<Request>> byPlace = null;
        for (Request[] byRank : waiting) {
            for (Request r : byRank) {
                if (r != null && r.unnamed() > 0) {
                    if (byPlace == null) {
                        byPlace = new TreeMap<>();
                    }
                    byPlace.computeIfAbsent(r.unnamed(), p -> new ArrayList<>()).add(r);
                }
            }
        }
        if (byPlace == null) {
            return null;
        }
        for (Map.Entry<Long, List<Request>> e : byPlace.entrySet()) {
            Request[] firstByRank = everyRankThere(e.getValue(), joined);
            if (firstByRank != null && !oneKind(firstByRank)) {
                return error(e.getKey(), firstByRank, e.getValue());
            }
        }
        return null;
    }

    /**
     * Each rank's first request of one place, when every rank that has not joined is there whole (all the members of
     * an unnamed group, which share their place); null otherwise.
     */
    private Request[] everyRankThere(List<Request> atPlace, boolean[] joined) {
        Request[] first = new Request[members.length];
        int[] count = new int[members.length];
        for (Request r : atPlace) {
            // A group's first member by name, whatever order the waiting ops come in, for a message that reads the same.
            if (first[r.rank()] == null || r.name().compareTo(first[r.rank()].name()) < 0) {
                first[r.rank()] = r;
            }
            count[r.rank()]++;
        }
        for (int r = 0; r < first.length; r++) {
            if (first[r] == null ? !joined[r] : count[r] < Math.max(1, first[r].groupSize())) {
                return null;
            }
        }
        return first;
    }

    /** One kind, and either all plain or all unnamed groups of one size. */
    private static boolean oneKind(Request[] byRank) {
        Request seen = null;
        for (Request r : byRank) {
            if (r != null) {
                if (seen != null && (r.kind() != seen.kind() || r.groupSize() != seen.groupSize())) {
                    return false;
                }
                seen = r;
            }
        }
        return true;
    }

    private Response error(long place, Request[] byRank, List<Request> atPlace) {
        StringBuilder sb = new StringBuilder("the ranks submitted different collectives as their unnamed op #")
                .append(place).append(where).append(": ");
        List<String> names = new ArrayList<>();
        OpKind kind = null;
        String sep = "";
        for (Request r : byRank) {
            if (r == null) {
                continue;
            }
            sb.append(sep).append("rank ").append(members[r.rank()]).append(' ').append(r.kind().label()).append(" '")
                    .append(r.name()).append("'");
            if (r.kind() != OpKind.BARRIER) {
                sb.append(' ').append(r.describe(members));
            }
            sep = ", ";
            kind = kind == null ? r.kind() : kind;
        }
        for (Request r : atPlace) {
            if (!names.contains(r.name())) {
                names.add(r.name());
            }
        }
        sb.append("; unnamed ops are matched by their order on each rank: call the same collectives in the same order"
                + " on every rank, or give them names");
        return Response.error(kind, List.copyOf(names), sb.toString());
    }
}
