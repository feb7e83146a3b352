package io.kolo.launch;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Where one rank sits, derived from the host of every rank: its local rank among the ranks on its host, and its
 * host's index among the hosts in order of their first rank. A process manager places ranks where it likes, so a
 * host's ranks need not be consecutive.
 */
record HostPlacement(int localRank, int localSize, int crossRank, int crossSize, String host) {

    static HostPlacement of(List<String> hosts, int rank) {
        if (hosts.isEmpty()) {
            throw new IllegalArgumentException("the list of every rank's host is empty: a job needs at least one rank");
        }
        if (rank < 0 || rank >= hosts.size()) {
            throw new IllegalArgumentException("rank " + rank + " is outside a job of " + hosts.size()
                    + " ranks (one host per rank given)");
        }
        Map<String, List<Integer>> byHost = new LinkedHashMap<>();
        for (int r = 0; r < hosts.size(); r++) {
            String h = hosts.get(r);
            if (h == null || h.isBlank()) {
                throw new IllegalArgumentException("the host of rank " + r + " is " + (h == null ? "null" : "blank")
                        + ": expected a host name or IP address for every rank");
            }
            byHost.computeIfAbsent(h, k -> new ArrayList<>()).add(r);
        }
        String host = hosts.get(rank);
        List<Integer> mine = byHost.get(host);
        int crossRank = new ArrayList<>(byHost.keySet()).indexOf(host);
        return new HostPlacement(mine.indexOf(rank), mine.size(), crossRank, byHost.size(), host);
    }
}
