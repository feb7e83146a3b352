package io.kolo.k8s;

import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Follows a job until it ends: the ranks' tagged output as it comes (each worker's per-node launcher tags it, or the
 * MPIJob's launcher), one line per change of a pod's state, one line per new reason it is not running, once the
 * pod that serves the job's page exists the kubectl line that reaches it, and at the end the job's exit code.
 * {@link #interrupt()} (Ctrl-C) stops following without touching the job.
 */
final class Follower {
    /** {@link #follow()}'s result when interrupted. */
    static final int INTERRUPTED = -1;
    /** {@link #follow()}'s result when a pod cannot start and Kubernetes would retry it forever. */
    static final int STUCK = -2;
    private static final Duration DRAIN = Duration.ofSeconds(10);

    private final KoloJob job;
    private final Integer rank;
    private final PrintStream out;
    private final PrintStream err;
    private final Duration poll;
    private final Duration startTimeout;
    private volatile boolean interrupted;
    private volatile Thread following;

    /**
     * @param startTimeout how long a pod may fail to start (no node fits it, an image it cannot pull) before
     *                     following stops: Kubernetes retries those without end, and the job would never finish
     */
    Follower(KoloJob job, Integer rank, PrintStream out, PrintStream err, Duration poll, Duration startTimeout) {
        this.job = job;
        this.rank = rank;
        this.out = out;
        this.err = err;
        this.poll = poll;
        this.startTimeout = startTimeout;
    }

    /** Follows to the end; the job's exit code, {@link #INTERRUPTED}, or {@link #STUCK}. */
    int follow() {
        following = Thread.currentThread();
        Map<String, String> states = new HashMap<>();
        Set<String> problems = new HashSet<>();
        Map<String, Thread> streams = new HashMap<>();
        Map<String, Long> stuckSince = new HashMap<>();
        long started = System.nanoTime();
        List<String> logPods = List.of();
        boolean dashboardSaid = false;
        while (!interrupted) {
            JobStatus s;
            try {
                s = job.status();
                logPods = job.logPods(rank);
            } catch (KubernetesJobException e) {
                if (interrupted) {
                    break;
                }
                throw e;
            }
            for (JobStatus.Pod p : s.pods()) {
                String state = p.phase() + (p.node().isEmpty() ? "" : " on " + p.node())
                        + p.exitCode().stream().mapToObj(c -> ", exit code " + c).findFirst().orElse("");
                if (!state.equals(states.put(p.name(), state))) {
                    say("pod " + p.name() + (p.ranks().isEmpty() ? " (launcher)" : " (ranks " + p.ranks() + ")")
                            + ": " + state);
                }
                if (!"Pending".equals(p.phase()) && logPods.contains(p.name()) && !streams.containsKey(p.name())) {
                    streams.put(p.name(), Thread.ofVirtual().name("kolo-k8s-log-" + p.name())
                            .start(() -> job.followPod(p.name(), rank, this::print)));
                }
            }
            if (!dashboardSaid) {
                Optional<String> dashboard = job.dashboard(s);
                dashboard.ifPresent(line -> say("dashboard: " + line));
                dashboardSaid = dashboard.isPresent();
            }
            for (String problem : s.problems()) {
                if (problems.add(problem)) {
                    say("why: " + problem);
                }
            }
            String stuck = s.phase().done() ? null : stuck(s, stuckSince, started);
            if (stuck != null) {
                say("stopped following job " + job.name() + ": " + stuck + "; the job is left as it is: kolo k8s"
                        + " delete " + job.name() + ", then submit it again");
                return STUCK;
            }
            if (s.phase().done()) {
                long deadline = System.nanoTime() + DRAIN.toNanos();
                for (Thread t : streams.values()) {
                    try {
                        t.join(Duration.ofNanos(Math.max(1, deadline - System.nanoTime())));
                    } catch (InterruptedException e) {
                        break;
                    }
                }
                int code = s.exitCode().orElse(1);
                say("job " + job.name() + (code == 0 ? " succeeded" : " failed with exit code " + code));
                return code;
            }
            try {
                Thread.sleep(poll);
            } catch (InterruptedException e) {
                break;
            }
        }
        // Ctrl-C interrupts this thread, also inside a request, which then leaves the flag set: the delete the user may
        // ask for next runs its requests on this thread, and each would fail at once.
        Thread.interrupted();
        return INTERRUPTED;
    }

    /**
     * Why following a job that has not ended should stop, or null: a pod has waited longer than the start timeout on
     * what Kubernetes retries without end, or no pod has appeared at all (a quota, an admission webhook, no MPI
     * Operator), so nothing would ever change.
     */
    private String stuck(JobStatus s, Map<String, Long> stuckSince, long started) {
        long now = System.nanoTime();
        for (JobStatus.Pod p : s.pods()) {
            if (!Explainer.cannotStart(p.waiting())) {
                stuckSince.remove(p.name());
            } else if (now - stuckSince.computeIfAbsent(p.name(), n -> now) > startTimeout.toNanos()) {
                return "pod " + p.name() + " has not started for " + startTimeout.toSeconds() + " s (--start-timeout; "
                        + p.waiting() + "), and Kubernetes keeps retrying";
            }
        }
        if (s.pods().isEmpty() && now - started > startTimeout.toNanos()) {
            return "none of its pods has appeared in " + startTimeout.toSeconds() + " s (--start-timeout)"
                    + (job.mode() == KoloJobSpec.Mode.OPERATOR_FREE ? ", and Kubernetes keeps retrying"
                    : ": is " + KubernetesJobs.operator(job.mode()) + " running?");
        }
        return null;
    }

    /** Stops following (from a signal handler or another thread); the job goes on. */
    void interrupt() {
        interrupted = true;
        Thread t = following;
        if (t != null) {
            t.interrupt();
        }
    }

    private void print(String line) {
        synchronized (out) {
            out.println(line);
            out.flush();
        }
    }

    private void say(String line) {
        synchronized (err) {
            err.println("kolo k8s: " + line);
            err.flush();
        }
    }

}
