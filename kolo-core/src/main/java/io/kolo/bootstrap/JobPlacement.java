package io.kolo.bootstrap;

import io.kolo.Topology;

import java.util.ArrayList;
import java.util.List;

/**
 * A rank's place in a job started by {@code mpirun}, {@code mpiexec} or {@code srun}, as Horovod defines it. Their
 * variables tell a rank only about its own host's ranks, so {@link JobEnvironment} can only guess the cross rank and
 * size from them (every host taken to run as many ranks as this one); once the ranks have met, they tell each other
 * their hosts through the rendezvous store and each takes its exact place from {@link Placement}. {@code kolo run}
 * and embedders give every rank its exact place already, and a launch that sets {@code KOLO_CROSS_RANK} and
 * {@code KOLO_CROSS_SIZE} keeps them.
 */
public final class JobPlacement {
    private JobPlacement() {
    }

    /** This rank's topology, exchanging hosts through {@code store} when the variables could only guess it. */
    public static Topology of(JobEnvironment job, KeyValueStore store) {
        return of(job, store, HostName.local().orElse(null));
    }

    static Topology of(JobEnvironment job, KeyValueStore store, String host) {
        Topology guessed = job.topology();
        if (job.size() == 1 || Launch.detect(job.env()).isEmpty()
                || job.env().containsKey(KoloSettings.CROSS_RANK.name())
                || job.env().containsKey(KoloSettings.CROSS_SIZE.name())) {
            return guessed;
        }
        // Every rank takes part, with or without a host name of its own, so that none waits for a key never written;
        // with its own local rank and size, so that every rank decides alike whether the hosts match the launcher's.
        store.put(StoreKeys.placementHost(job.rank()), job.localRank() + " " + job.localSize() + " "
                + (host == null ? "" : host.strip()));
        long deadline = System.nanoTime() + job.startTimeout().toNanos();
        List<String> hosts = new ArrayList<>(job.size());
        int[][] launcherLocal = new int[job.size()][];
        for (int r = 0; r < job.size(); r++) {
            String[] f = StartWait.await(store, StoreKeys.placementHost(r), deadline, job.rank(), "rank " + r,
                    job.startTimeout(), "to publish its host name").split(" ", 3);
            launcherLocal[r] = new int[] {Integer.parseInt(f[0]), Integer.parseInt(f[1])};
            hosts.add(f[2]);
        }
        if (hosts.stream().anyMatch(String::isBlank)) {
            return guessed;
        }
        List<Topology> exact = Placement.of(hosts);
        for (int r = 0; r < job.size(); r++) {
            // Host names that group ranks otherwise than the launcher did (containers of one machine sharing a name)
            // are not where the launcher placed them: keep what the variables say.
            if (exact.get(r).localRank() != launcherLocal[r][0] || exact.get(r).localSize() != launcherLocal[r][1]) {
                return guessed;
            }
        }
        return exact.get(job.rank());
    }
}
