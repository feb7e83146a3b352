package io.kolo.bootstrap;

import io.kolo.Topology;

import java.util.List;

/**
 * A rank's place in a job started by {@code mpirun}, {@code mpiexec} or {@code srun}, as Horovod defines it. Their
 * variables tell a rank only about its own host's ranks, so {@link JobEnvironment} can only guess the cross rank and
 * size from them (every host taken to run as many ranks as this one); once the ranks have told each other their hosts
 * (with their topologies, over the flat collectives, before the collectives are chosen), each takes its exact place
 * from {@link Placement}. {@code kolo run} and embedders give every rank its exact place already, and a launch that
 * sets {@code KOLO_CROSS_RANK} and {@code KOLO_CROSS_SIZE} keeps them.
 */
public final class JobPlacement {
    private JobPlacement() {
    }

    /**
     * This rank's topology: from every rank's host name when the variables could only guess it.
     *
     * @param names every rank's host name in rank order, when they group the ranks as the launcher's local ranks say
     *              (containers of one machine sharing a name do not: they are not where the launcher placed them);
     *              null when they do not or some rank knows none, and then the variables' guess stands
     */
    public static Topology of(JobEnvironment job, List<String> names) {
        Topology guessed = job.topology();
        if (names == null || !guesses(job)) {
            return guessed;
        }
        return Placement.of(names).get(job.rank());
    }

    /** Whether {@code job}'s cross rank and size are only the variables' guess. */
    static boolean guesses(JobEnvironment job) {
        return job.size() > 1 && Launch.detect(job.env()).isPresent()
                && !job.env().containsKey(KoloSettings.CROSS_RANK.name())
                && !job.env().containsKey(KoloSettings.CROSS_SIZE.name());
    }
}
