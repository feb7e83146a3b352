package io.kolo.launcher.elastic;

import io.kolo.launcher.job.Hosts;
import io.kolo.launcher.job.RankMap;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Where each worker of an elastic job's next generation runs, and with which rank. Stable, as Horovod's: hosts that
 * already have workers come first, in the order of their workers' ranks, then new hosts in the order discovered;
 * on a host its present workers keep their order and new ones take the free slots; ranks are packed host by host.
 * So ranks on hosts that stay keep the lowest ranks, in their order; a worker started again in a failed rank's slot
 * comes after its host's survivors.
 */
public final class ElasticSlots {
    /** One place of the next generation; {@code worker} is null for a slot a new worker is to fill. */
    public record Place(String worker, RankMap.Slot slot) {
    }

    /** A worker that runs now, on {@code host}, with rank {@code rank} in the current generation. */
    public record Current(String worker, String host, int rank) {
    }

    private ElasticSlots() {
    }

    /**
     * @param current  the workers that run now and may stay, any order
     * @param hosts    the usable hosts now (blacklisted ones left out), in discovery order
     * @param size     how many ranks the next generation has (at most the hosts' slots)
     */
    public static List<Place> assign(List<Current> current, List<Hosts.Host> hosts, int size) {
        Map<String, Integer> capacity = new LinkedHashMap<>();
        hosts.forEach(h -> capacity.put(h.name(), h.slots()));
        Map<String, List<String>> byHost = new LinkedHashMap<>();
        current.stream().filter(c -> capacity.containsKey(c.host()))
                .sorted(java.util.Comparator.comparingInt(Current::rank))
                .forEach(c -> byHost.computeIfAbsent(c.host(), h -> new ArrayList<>()).add(c.worker()));
        capacity.keySet().forEach(h -> byHost.computeIfAbsent(h, x -> new ArrayList<>()));
        // Each host's workers in order, then its free slots (null), up to its capacity; the first `size` win.
        List<Hosts.Host> used = new ArrayList<>();
        List<String> workers = new ArrayList<>();
        int left = size;
        for (Map.Entry<String, List<String>> e : byHost.entrySet()) {
            int take = Math.min(left, capacity.get(e.getKey()));
            if (take == 0) {
                continue;
            }
            List<String> here = new ArrayList<>(e.getValue().subList(0, Math.min(take, e.getValue().size())));
            while (here.size() < take) {
                here.add(null);
            }
            used.add(new Hosts.Host(e.getKey(), take));
            workers.addAll(here);
            left -= take;
        }
        List<RankMap.Slot> slots = RankMap.assign(used, size - left);
        List<Place> places = new ArrayList<>();
        for (int r = 0; r < slots.size(); r++) {
            places.add(new Place(workers.get(r), slots.get(r)));
        }
        return places;
    }
}
