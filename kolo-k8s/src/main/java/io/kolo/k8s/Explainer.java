package io.kolo.k8s;

import io.fabric8.kubernetes.api.model.ContainerStatus;
import io.fabric8.kubernetes.api.model.ContainerStateTerminated;
import io.fabric8.kubernetes.api.model.ContainerStateWaiting;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.api.model.Quantity;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.BiFunction;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Says in one line per cause why a job is not running, from what Kubernetes reports: pod conditions (unschedulable),
 * container states (image pull errors, {@code CreateContainerConfigError}, OOMKilled, crash loops, a rank's non-zero
 * exit), the job's own conditions (deadline exceeded), events, and the last lines of a failed pod's log (the
 * per-node launcher's "rank 3 exited with code 1" and "the rendezvous host ... did not resolve").
 */
final class Explainer {
    private static final Pattern INSUFFICIENT = Pattern.compile("Insufficient ([a-zA-Z0-9/-]+(?:\\.[a-zA-Z0-9/-]+)*)");
    // "cannot start rank": a v1 MPIJob's launcher whose rsh agent (kubectl exec) could not start a rank.
    private static final Pattern KOLO_LINE = Pattern.compile("^kolo: .*(exited with code|was lost|did not resolve"
            + "|cannot join|cannot serve|lost the rendezvous|cannot start rank).*");
    private static final Set<String> PULL_ERRORS = Set.of("ErrImagePull", "ImagePullBackOff", "InvalidImageName",
            "ErrImageNeverPull");
    private static final int LOG_LINES = 20;
    /** Waiting reasons Kubernetes retries without end: the pod never starts unless someone fixes its cause. */
    private static final Set<String> CANNOT_START = Set.of("Unschedulable", "ErrImagePull", "ImagePullBackOff",
            "InvalidImageName", "ErrImageNeverPull", "CreateContainerConfigError", "CreateContainerError");

    private final KoloJobSpec.Mode mode;
    private final int slots;
    // (pod, previous container?) -> the last lines of its log, empty when none can be read.
    private final BiFunction<String, Boolean, List<String>> tail;
    private final Supplier<List<Node>> nodes;

    Explainer(KoloJobSpec.Mode mode, int slots, BiFunction<String, Boolean, List<String>> tail,
              Supplier<List<Node>> nodes) {
        this.mode = mode;
        this.slots = slots;
        this.tail = tail;
        this.nodes = nodes;
    }

    /**
     * @param jobFailure the job's own Failed condition (reason: message), empty while it has none
     * @param events     warning events of the job's pods
     */
    List<String> explain(List<Pod> pods, Optional<String> jobFailure, List<Event> events) {
        Set<String> lines = new LinkedHashSet<>();
        jobFailure.filter(f -> f.startsWith("DeadlineExceeded")).ifPresent(f -> lines.add("the job ran past its"
                + " deadline (activeDeadlineSeconds) and Kubernetes stopped it: " + f.substring(f.indexOf(':') + 1)
                .strip() + "; raise --active-deadline if it needs longer"));
        Set<String> explained = new LinkedHashSet<>();
        for (Pod pod : pods) {
            Optional<String> why = unschedulable(pod).or(() -> container(pod));
            why.ifPresent(w -> {
                lines.add(w);
                explained.add(pod.getMetadata().getName());
            });
        }
        for (Event e : events) {
            String pod = e.getInvolvedObject() == null ? null : e.getInvolvedObject().getName();
            if (pod != null && !explained.contains(pod) && "Warning".equals(e.getType())
                    && pods.stream().anyMatch(p -> p.getMetadata().getName().equals(pod))) {
                if ("FailedScheduling".equals(e.getReason())) {
                    lines.add(unschedulableLine(pod, e.getMessage(), podOf(pods, pod)));
                } else {
                    lines.add("pod " + pod + ": " + e.getReason() + ": " + e.getMessage());
                }
                explained.add(pod);
            }
        }
        return new ArrayList<>(lines);
    }

    private static Pod podOf(List<Pod> pods, String name) {
        return pods.stream().filter(p -> p.getMetadata().getName().equals(name)).findFirst().orElseThrow();
    }

    private Optional<String> unschedulable(Pod pod) {
        if (pod.getStatus() == null || pod.getStatus().getConditions() == null) {
            return Optional.empty();
        }
        for (PodCondition c : pod.getStatus().getConditions()) {
            if ("PodScheduled".equals(c.getType()) && "False".equals(c.getStatus())
                    && "Unschedulable".equals(c.getReason())) {
                return Optional.of(unschedulableLine(pod.getMetadata().getName(), c.getMessage(), pod));
            }
        }
        return Optional.empty();
    }

    /** "0/3 nodes are available: 3 Insufficient cpu." plus which request to lower and how many nodes could fit one. */
    private String unschedulableLine(String pod, String message, Pod p) {
        StringBuilder sb = new StringBuilder("pod " + pod + " cannot be scheduled: " + message);
        Matcher m = INSUFFICIENT.matcher(message == null ? "" : message);
        Set<String> short_ = new LinkedHashSet<>();
        while (m.find()) {
            short_.add(m.group(1));
        }
        for (String resource : short_) {
            Quantity asked = request(p, resource);
            String flag = switch (resource) {
                case "cpu" -> "--cpu";
                case "memory" -> "--memory";
                case "nvidia.com/gpu" -> "--gpu";
                default -> resource;
            };
            sb.append("; lower ").append(flag);
            if (asked != null) {
                sb.append(" (each worker asks for ").append(asked)
                        .append(fitting(resource, asked).map(n -> "; " + n).orElse("")).append(')');
            }
            sb.append(" or use fewer --workers");
        }
        return sb.toString();
    }

    private static Quantity request(Pod p, String resource) {
        return p.getSpec().getContainers().stream()
                .map(c -> c.getResources() == null || c.getResources().getRequests() == null ? null
                        : c.getResources().getRequests().get(resource))
                .filter(q -> q != null).findFirst().orElse(null);
    }

    /** How many nodes have that much allocatable, when the nodes can be read (it needs a cluster-wide right). */
    private Optional<String> fitting(String resource, Quantity asked) {
        List<Node> all;
        try {
            all = nodes.get();
        } catch (RuntimeException forbidden) {
            return Optional.empty();
        }
        if (all.isEmpty()) {
            return Optional.empty();
        }
        long fit = all.stream().filter(n -> {
            Map<String, Quantity> alloc = n.getStatus() == null ? null : n.getStatus().getAllocatable();
            Quantity have = alloc == null ? null : alloc.get(resource);
            return have != null && have.getNumericalAmount().compareTo(asked.getNumericalAmount()) >= 0;
        }).count();
        return Optional.of(fit + " of " + all.size() + " nodes have that much allocatable " + resource);
    }

    private Optional<String> container(Pod pod) {
        if (pod.getStatus() == null || pod.getStatus().getContainerStatuses() == null) {
            return Optional.empty();
        }
        String name = pod.getMetadata().getName();
        for (ContainerStatus cs : pod.getStatus().getContainerStatuses()) {
            ContainerStateWaiting waiting = cs.getState() == null ? null : cs.getState().getWaiting();
            if (waiting != null && PULL_ERRORS.contains(waiting.getReason())) {
                return Optional.of("pod " + name + " cannot pull image " + cs.getImage() + " (" + waiting.getReason()
                        + "): " + waiting.getMessage());
            }
            if (waiting != null && "CreateContainerConfigError".equals(waiting.getReason())) {
                return Optional.of("pod " + name + " cannot start its container (CreateContainerConfigError): "
                        + waiting.getMessage());
            }
            ContainerStateTerminated last = cs.getLastState() == null ? null : cs.getLastState().getTerminated();
            if (waiting != null && "CrashLoopBackOff".equals(waiting.getReason())) {
                return Optional.of("pod " + name + " keeps crashing (CrashLoopBackOff, " + cs.getRestartCount()
                        + " restarts" + (last == null ? "" : ", last exit code " + last.getExitCode()) + "); last log"
                        + " lines: " + String.join(" | ", lastLines(tail.apply(name, true), 5)));
            }
            ContainerStateTerminated done = cs.getState() == null ? null : cs.getState().getTerminated();
            ContainerStateTerminated oom = done != null && "OOMKilled".equals(done.getReason()) ? done
                    : last != null && "OOMKilled".equals(last.getReason()) ? last : null;
            if (oom != null) {
                return Optional.of(where(pod) + " was killed for using more memory than its limit "
                        + limit(pod, "memory") + " (OOMKilled); raise --memory or --limit-memory");
            }
            if (done != null && done.getExitCode() != null && done.getExitCode() != 0) {
                return Optional.of(failed(pod, done.getExitCode()));
            }
        }
        return Optional.empty();
    }

    /** A worker (or the launcher) that exited non-zero, with the launcher's own line saying which rank and why. */
    private String failed(Pod pod, int code) {
        List<String> log = tail.apply(pod.getMetadata().getName(), false);
        List<String> kolo = log.stream().filter(l -> KOLO_LINE.matcher(l).matches()).toList();
        String line = where(pod) + " exited with code " + code;
        return kolo.isEmpty() ? line + (log.isEmpty() ? "" : "; last log lines: "
                + String.join(" | ", lastLines(log, 5))) : line + ": " + String.join(" | ", kolo);
    }

    private String where(Pod pod) {
        int index = StatusReader.index(pod);
        String node = pod.getSpec() == null || pod.getSpec().getNodeName() == null ? ""
                : ", node " + pod.getSpec().getNodeName();
        if (index < 0) {
            return "pod " + pod.getMetadata().getName() + " (launcher" + node + ")";
        }
        return "pod " + pod.getMetadata().getName() + " (" + StatusReader.rankWord(index, slots, mode) + node + ")";
    }

    private static String limit(Pod pod, String resource) {
        return pod.getSpec().getContainers().stream()
                .map(c -> c.getResources() == null || c.getResources().getLimits() == null ? null
                        : c.getResources().getLimits().get(resource))
                .filter(q -> q != null).map(Quantity::toString).findFirst().orElse("(none set)");
    }

    private static List<String> lastLines(List<String> lines, int n) {
        return lines.subList(Math.max(0, lines.size() - n), lines.size());
    }

    /** True for a pod waiting on what waiting alone does not fix (no node fits, a wrong image, a missing Secret). */
    static boolean cannotStart(String waitingReason) {
        return CANNOT_START.contains(waitingReason);
    }

    static int logLines() {
        return LOG_LINES;
    }
}
