package io.kolo.k8s;

import java.util.List;
import java.util.OptionalInt;

/**
 * Where a Kolo job on Kubernetes stands, read at one moment.
 *
 * @param name     the job's name
 * @param mode     how it was submitted
 * @param phase    pending, running, succeeded or failed
 * @param pods     the job's pods, workers in index order (then the MPIJob's launcher)
 * @param problems one line per reason the job is not running as it should (empty when all is well)
 * @param exitCode the job's exit code once it has ended: 0, or the first failed rank's
 */
public record JobStatus(String name, KoloJobSpec.Mode mode, Phase phase, List<Pod> pods, List<String> problems,
                        OptionalInt exitCode) {

    /** The job's phase. */
    public enum Phase {
        PENDING, RUNNING, SUCCEEDED, FAILED;

        /** True once the job has ended. */
        public boolean done() {
            return this == SUCCEEDED || this == FAILED;
        }
    }

    /**
     * One pod of the job.
     *
     * @param name     the pod's name
     * @param role     "worker" or "launcher"
     * @param index    a worker's index (its node rank), -1 for the launcher
     * @param ranks    the ranks it runs, e.g. "4-5", empty for a launcher
     * @param phase    Kubernetes' pod phase (Pending, Running, Succeeded, Failed)
     * @param node     the node it was scheduled on, empty until then
     * @param exitCode its container's exit code once terminated
     * @param waiting  why it waits to start: Unschedulable, or its container's reason (e.g. ImagePullBackOff); empty
     *                 when it does not
     */
    public record Pod(String name, String role, int index, String ranks, String phase, String node,
                      OptionalInt exitCode, String waiting) {
    }

    /** Copies the lists. */
    public JobStatus {
        pods = List.copyOf(pods);
        problems = List.copyOf(problems);
    }

    /** One line per pod and problem, as {@code kolo k8s status} prints it. */
    public String describe() {
        StringBuilder sb = new StringBuilder("job " + name + " (" + mode.flag() + "): " + phase.name().toLowerCase()
                + exitCode.stream().mapToObj(c -> ", exit code " + c).findFirst().orElse("") + "\n");
        for (Pod p : pods) {
            sb.append("  ").append(p.name()).append(p.ranks().isEmpty() ? " (launcher)" : " (ranks " + p.ranks() + ")")
                    .append(": ").append(p.phase()).append(p.node().isEmpty() ? "" : " on " + p.node())
                    .append(p.exitCode().stream().mapToObj(c -> ", exit code " + c).findFirst().orElse(""))
                    .append('\n');
        }
        for (String problem : problems) {
            sb.append("  why: ").append(problem).append('\n');
        }
        return sb.toString();
    }
}
