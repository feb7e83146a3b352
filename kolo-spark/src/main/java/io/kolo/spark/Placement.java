package io.kolo.spark;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Where one rank sits, derived from the hosts of every barrier task (task {@code i} is rank {@code i}): its local
 * rank among the ranks on its host, and its host's index among the hosts in order of their first rank. Spark places
 * barrier tasks where it likes, so a host's ranks need not be consecutive.
 */
record Placement(int rank, int size, int localRank, int localSize, int crossRank, int crossSize, String host) {

    static Placement of(List<String> hosts, int rank) {
        if (rank < 0 || rank >= hosts.size()) {
            throw new IllegalArgumentException("rank " + rank + " outside a job of " + hosts.size());
        }
        Map<String, List<Integer>> byHost = new LinkedHashMap<>();
        for (int r = 0; r < hosts.size(); r++) {
            byHost.computeIfAbsent(hosts.get(r), h -> new ArrayList<>()).add(r);
        }
        String host = hosts.get(rank);
        List<Integer> mine = byHost.get(host);
        int crossRank = new ArrayList<>(byHost.keySet()).indexOf(host);
        return new Placement(rank, hosts.size(), mine.indexOf(rank), mine.size(), crossRank, byHost.size(), host);
    }

    /** The host part of a barrier task's address ("host:port", "[v6]:port" or a bare host). */
    static String hostOf(String address) {
        if (address.startsWith("[")) {
            int end = address.indexOf(']');
            return end > 0 ? address.substring(1, end) : address;
        }
        int colon = address.lastIndexOf(':');
        return colon > 0 && address.indexOf(':') == colon ? address.substring(0, colon) : address;
    }
}
