package io.kolo.k8s;

import io.fabric8.kubernetes.api.model.ContainerStateTerminated;
import io.fabric8.kubernetes.api.model.ContainerStatus;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.api.model.batch.v1.JobCondition;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;
import java.util.stream.Collectors;

/** Reads a job's objects, pods and events and makes a {@link JobStatus} of them. */
final class StatusReader {
    static final String COMPLETION_INDEX = "batch.kubernetes.io/job-completion-index";
    static final String REPLICA_INDEX = "training.kubeflow.org/replica-index";

    /**
     * The job's top-level object and its shape.
     *
     * @param dashboardPort the port of the job's page on the pod that serves it; null when it has none
     */
    record Target(String namespace, String name, KoloJobSpec.Mode mode, int workers, int slots,
                  Integer dashboardPort) {
    }

    private final KubernetesClient client;
    private final Target target;

    StatusReader(KubernetesClient client, Target target) {
        this.client = client;
        this.target = target;
    }

    /**
     * What the name {@code name} stands for: the Kolo job of that name (an Indexed Job, else an MPIJob), or else the
     * kind of a Job or MPIJob of that name that kolo k8s did not make (null when there is neither).
     */
    record Lookup(Optional<Target> kolo, String otherKind) {
    }

    /**
     * Kolo's own objects are told by their {@code kolo.io/job} label, never by their name alone: a Job or MPIJob of
     * the same name made by someone else must not be read, followed or deleted as Kolo's.
     */
    static Lookup lookup(KubernetesClient client, String namespace, String name) {
        Job job = client.batch().v1().jobs().inNamespace(namespace).withName(name).get();
        if (madeByKolo(job, name)) {
            return new Lookup(Optional.of(target(namespace, name, KoloJobSpec.Mode.OPERATOR_FREE, job)), null);
        }
        // A cluster has one MPIJob version or the other (their CRDs share one name); ask for each it has.
        String otherKind = job != null ? "Job" : null;
        for (KoloJobSpec.Mode mode : MPI_MODES) {
            GenericKubernetesResource mpi = mpiJobs(client, namespace, mode).map(r -> r.withName(name).get())
                    .orElse(null);
            if (madeByKolo(mpi, name)) {
                return new Lookup(Optional.of(target(namespace, name, mode, mpi)), null);
            }
            if (mpi != null && otherKind == null) {
                otherKind = Manifests.MPIJOB_KIND;
            }
        }
        return new Lookup(Optional.empty(), otherKind);
    }

    private static boolean madeByKolo(HasMetadata o, String name) {
        return o != null && o.getMetadata().getLabels() != null
                && name.equals(o.getMetadata().getLabels().get(Manifests.JOB_LABEL));
    }

    /** Every Kolo job in the namespace. */
    static List<Target> list(KubernetesClient client, String namespace) {
        List<Target> all = new ArrayList<>();
        for (Job j : client.batch().v1().jobs().inNamespace(namespace).withLabel(Manifests.MANAGED_BY, "kolo").list()
                .getItems()) {
            all.add(target(namespace, j.getMetadata().getName(), KoloJobSpec.Mode.OPERATOR_FREE, j));
        }
        for (KoloJobSpec.Mode mode : MPI_MODES) {
            mpiJobs(client, namespace, mode).ifPresent(r -> r.withLabel(Manifests.MANAGED_BY, "kolo").list()
                    .getItems().forEach(m -> all.add(target(namespace, m.getMetadata().getName(), mode, m))));
        }
        return all;
    }

    /** The modes that make an MPIJob, the MPI Operator's first. */
    private static final List<KoloJobSpec.Mode> MPI_MODES = List.of(KoloJobSpec.Mode.MPIJOB,
            KoloJobSpec.Mode.MPIJOB_V1);

    static Optional<io.fabric8.kubernetes.client.dsl.NonNamespaceOperation<GenericKubernetesResource,
            io.fabric8.kubernetes.api.model.GenericKubernetesResourceList,
            io.fabric8.kubernetes.client.dsl.Resource<GenericKubernetesResource>>> mpiJobs(KubernetesClient client,
                                                                                             String namespace,
                                                                                             KoloJobSpec.Mode mode) {
        try {
            var r = client.genericKubernetesResources(Manifests.mpiJobApi(mode), Manifests.MPIJOB_KIND)
                    .inNamespace(namespace);
            return Optional.of(r);
        } catch (KubernetesClientException noSuchKind) {
            // That operator's CRD is not installed: there are no MPIJobs of this version.
            return Optional.empty();
        }
    }

    private static Target target(String namespace, String name, KoloJobSpec.Mode mode, HasMetadata o) {
        Map<String, String> a = o.getMetadata().getAnnotations() == null ? Map.of() : o.getMetadata().getAnnotations();
        return new Target(namespace, name, mode, parse(a.get(Manifests.WORKERS_ANNOTATION)),
                parse(a.get(Manifests.SLOTS_ANNOTATION)), port(a.get(Manifests.DASHBOARD_ANNOTATION)));
    }

    private static Integer port(String v) {
        try {
            return v == null ? null : Integer.valueOf(v);
        } catch (NumberFormatException e) {
            return null;
        }
    }

    private static int parse(String v) {
        try {
            return v == null ? 1 : Math.max(1, Integer.parseInt(v));
        } catch (NumberFormatException e) {
            return 1;
        }
    }

    List<Pod> pods() {
        List<Pod> pods = new ArrayList<>(client.pods().inNamespace(target.namespace())
                .withLabel(Manifests.JOB_LABEL, target.name()).list().getItems());
        pods.sort(Comparator.comparingInt((Pod p) -> index(p) < 0 ? Integer.MAX_VALUE : index(p))
                .thenComparing(p -> p.getMetadata().getName()));
        return pods;
    }

    JobStatus read() {
        List<Pod> pods = pods();
        Set<String> names = pods.stream().map(p -> p.getMetadata().getName()).collect(Collectors.toSet());
        List<Event> all = client.v1().events().inNamespace(target.namespace()).list().getItems();
        List<Event> events = all.stream()
                .filter(e -> e.getInvolvedObject() != null && names.contains(e.getInvolvedObject().getName()))
                .toList();
        Optional<String> failed = Optional.empty();
        JobStatus.Phase phase;
        if (target.mode() == KoloJobSpec.Mode.OPERATOR_FREE) {
            Job job = client.batch().v1().jobs().inNamespace(target.namespace()).withName(target.name()).get();
            if (job == null) {
                throw gone();
            }
            List<JobCondition> conditions = job == null || job.getStatus() == null
                    || job.getStatus().getConditions() == null ? List.of() : job.getStatus().getConditions();
            failed = conditions.stream().filter(c -> "True".equals(c.getStatus())
                            && ("Failed".equals(c.getType()) || "FailureTarget".equals(c.getType())))
                    .map(c -> c.getReason() + ": " + c.getMessage()).findFirst();
            boolean complete = conditions.stream().anyMatch(c -> "True".equals(c.getStatus())
                    && "Complete".equals(c.getType()));
            phase = failed.isPresent() ? JobStatus.Phase.FAILED : complete ? JobStatus.Phase.SUCCEEDED
                    : running(pods) ? JobStatus.Phase.RUNNING : JobStatus.Phase.PENDING;
        } else {
            GenericKubernetesResource mpi = client.genericKubernetesResources(Manifests.mpiJobApi(target.mode()),
                    Manifests.MPIJOB_KIND).inNamespace(target.namespace()).withName(target.name()).get();
            if (mpi == null) {
                throw gone();
            }
            List<Map<String, Object>> conditions = mpiConditions(mpi);
            failed = conditions.stream().filter(c -> "Failed".equals(c.get("type")) && "True".equals(c.get("status")))
                    .map(c -> c.get("reason") + ": " + c.get("message")).findFirst();
            phase = failed.isPresent() ? JobStatus.Phase.FAILED
                    : is(conditions, "Succeeded") ? JobStatus.Phase.SUCCEEDED
                    : is(conditions, "Running") ? JobStatus.Phase.RUNNING : JobStatus.Phase.PENDING;
        }
        List<JobStatus.Pod> podStates = pods.stream().map(this::pod).toList();
        OptionalInt exit = switch (phase) {
            case SUCCEEDED -> OptionalInt.of(0);
            case FAILED -> firstFailure(pods);
            default -> OptionalInt.empty();
        };
        List<String> problems = new ArrayList<>(new Explainer(target.mode(), target.slots(), this::tail,
                () -> client.nodes().list().getItems()).explain(pods, failed, events));
        if (pods.stream().filter(p -> index(p) >= 0).count() < target.workers()) {
            problems.addAll(ownEvents(all));
        }
        return new JobStatus(target.name(), target.mode(), phase, podStates, problems, exit);
    }

    /** Else a job deleted while followed would read as pending, with no pods, for ever. */
    private KubernetesJobException gone() {
        return new KubernetesJobException("job " + target.name() + " no longer exists in namespace "
                + target.namespace() + ": it was deleted (kolo k8s delete, kubectl, or --ttl-after-finished) before its"
                + " end was seen");
    }

    /**
     * Warning events of the job itself: why its controller cannot make its pods (a quota, an admission webhook), which
     * no pod's state can tell. Read only while pods are missing, since events outlive what they report.
     */
    private List<String> ownEvents(List<Event> all) {
        String kind = target.mode() == KoloJobSpec.Mode.OPERATOR_FREE ? "Job" : Manifests.MPIJOB_KIND;
        return all.stream().filter(e -> "Warning".equals(e.getType()) && e.getInvolvedObject() != null
                        && kind.equals(e.getInvolvedObject().getKind())
                        && target.name().equals(e.getInvolvedObject().getName()))
                .map(e -> "job " + target.name() + ": " + e.getReason() + ": " + e.getMessage()).distinct().toList();
    }

    @SuppressWarnings("unchecked")
    private static List<Map<String, Object>> mpiConditions(GenericKubernetesResource mpi) {
        if (mpi == null || !(mpi.getAdditionalProperties().get("status") instanceof Map<?, ?> status)
                || !(status.get("conditions") instanceof List<?> list)) {
            return List.of();
        }
        return (List<Map<String, Object>>) list;
    }

    private static boolean is(List<Map<String, Object>> conditions, String type) {
        return conditions.stream().anyMatch(c -> type.equals(c.get("type")) && "True".equals(c.get("status")));
    }

    private boolean running(List<Pod> pods) {
        long workers = pods.stream().filter(p -> index(p) >= 0).count();
        return workers >= target.workers() && pods.stream().filter(p -> index(p) >= 0)
                .allMatch(p -> p.getStatus() != null && Set.of("Running", "Succeeded").contains(p.getStatus().getPhase()));
    }

    /** The exit code of the pod that failed first (the launcher's for an MPIJob); 1 when none says. */
    private static OptionalInt firstFailure(List<Pod> pods) {
        return OptionalInt.of(pods.stream()
                .sorted(Comparator.comparingInt((Pod p) -> index(p) < 0 ? 0 : 1))
                .flatMap(p -> terminated(p).stream())
                .filter(t -> t.getExitCode() != null && t.getExitCode() != 0)
                .sorted(Comparator.comparing(t -> t.getFinishedAt() == null ? "" : t.getFinishedAt()))
                .map(ContainerStateTerminated::getExitCode).findFirst().orElse(1));
    }

    private static Optional<ContainerStateTerminated> terminated(Pod p) {
        if (p.getStatus() == null || p.getStatus().getContainerStatuses() == null) {
            return Optional.empty();
        }
        return p.getStatus().getContainerStatuses().stream().map(ContainerStatus::getState)
                .filter(s -> s != null && s.getTerminated() != null).map(s -> s.getTerminated()).findFirst();
    }

    private JobStatus.Pod pod(Pod p) {
        int index = index(p);
        return new JobStatus.Pod(p.getMetadata().getName(), index < 0 ? "launcher" : "worker", index,
                index < 0 ? "" : ranks(index, target.slots()),
                p.getStatus() == null || p.getStatus().getPhase() == null ? "Pending" : p.getStatus().getPhase(),
                p.getSpec() == null || p.getSpec().getNodeName() == null ? "" : p.getSpec().getNodeName(),
                terminated(p).map(t -> OptionalInt.of(t.getExitCode())).orElse(OptionalInt.empty()), waiting(p));
    }

    private static String waiting(Pod p) {
        if (p.getStatus() != null && p.getStatus().getConditions() != null && p.getStatus().getConditions().stream()
                .anyMatch(c -> "PodScheduled".equals(c.getType()) && "False".equals(c.getStatus())
                        && "Unschedulable".equals(c.getReason()))) {
            return "Unschedulable";
        }
        if (p.getStatus() == null || p.getStatus().getContainerStatuses() == null) {
            return "";
        }
        return p.getStatus().getContainerStatuses().stream().map(ContainerStatus::getState)
                .filter(s -> s != null && s.getWaiting() != null && s.getWaiting().getReason() != null)
                .map(s -> s.getWaiting().getReason()).findFirst().orElse("");
    }

    /** A worker's index (its node rank), -1 for an MPIJob's launcher. */
    static int index(Pod p) {
        Map<String, String> labels = p.getMetadata().getLabels() == null ? Map.of() : p.getMetadata().getLabels();
        if ("launcher".equals(labels.get(Manifests.ROLE_LABEL))) {
            return -1;
        }
        Map<String, String> annotations = p.getMetadata().getAnnotations() == null ? Map.of()
                : p.getMetadata().getAnnotations();
        String v = annotations.getOrDefault(COMPLETION_INDEX, labels.get(REPLICA_INDEX));
        if (v == null) {
            String n = p.getMetadata().getName();
            v = n.substring(n.lastIndexOf('-') + 1);
        }
        try {
            return Integer.parseInt(v);
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    static String ranks(int index, int slots) {
        return slots == 1 ? "" + index : index * slots + "-" + (index * slots + slots - 1);
    }

    static String rankWord(int index, int slots, KoloJobSpec.Mode mode) {
        return (slots == 1 ? "rank " : "ranks ") + ranks(index, slots);
    }

    /** The last lines of a pod's log (of its previous container when asked); empty when it cannot be read. */
    List<String> tail(String pod, boolean previous) {
        try {
            String log = PodLogs.read(client, target.namespace(), pod, Explainer.logLines(), previous);
            return log == null ? List.of() : log.lines().toList();
        } catch (KubernetesClientException e) {
            return List.of();
        }
    }
}
