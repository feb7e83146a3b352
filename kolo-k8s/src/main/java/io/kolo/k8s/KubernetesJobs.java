package io.kolo.k8s;

import io.fabric8.kubernetes.api.model.DeletionPropagation;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;

import java.net.ConnectException;
import java.net.http.HttpConnectTimeoutException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Supplier;

/**
 * Submits Kolo jobs to a Kubernetes cluster and finds them again: the Java API behind {@code kolo k8s}, for
 * workflow engines and notebooks.
 *
 * <pre>{@code
 * try (KubernetesJobs k8s = KubernetesJobs.connect()) {
 *     KoloJob job = k8s.submit(KoloJobSpec.builder("train").image("registry.example.com/train:1.0")
 *             .workers(2).slots(4).command(List.of("-cp", "/app/app.jar", "com.example.Train")).build());
 *     JobStatus status = job.waitFor(Duration.ofHours(1));
 *     System.out.println(status.describe());
 * }
 * }</pre>
 */
public final class KubernetesJobs implements AutoCloseable {
    private final KubernetesClient client;
    private final boolean owned;
    /** How long a submit waits for an earlier job of the same name to be deleted (its pods end in 30 s by default). */
    Duration leftoverWait = Duration.ofSeconds(60);

    private KubernetesJobs(KubernetesClient client, boolean owned) {
        this.client = client;
        this.owned = owned;
    }

    /**
     * Connects with the kubeconfig kubectl would use ({@code KUBECONFIG}, {@code ~/.kube/config}, or the pod's
     * service account); {@link KubernetesJobException} saying where it looked when there is none.
     */
    public static KubernetesJobs connect() {
        return new KubernetesJobs(new KubernetesClientBuilder()
                .withConfig(Kubeconfig.config(System.getenv(), home())).build(), true);
    }

    /** The home directory kubectl uses: $HOME, else the JVM's idea of it. */
    static Path home() {
        String home = System.getenv("HOME");
        return Path.of(home != null && !home.isBlank() ? home : System.getProperty("user.home"));
    }

    /** Uses a client you built (it stays yours to close). */
    public static KubernetesJobs using(KubernetesClient client) {
        return new KubernetesJobs(client, false);
    }

    /** The namespace of jobs submitted without one: the kubeconfig's, else "default". */
    public String namespace() {
        String ns = client.getNamespace();
        return ns == null ? "default" : ns;
    }

    /**
     * Creates the job's objects. Operator-free: the Indexed Job first, suspended, then the Secret and Service owned by
     * it, then the Job is let go, so no pod starts before its Secret and name exist.
     */
    public KoloJob submit(KoloJobSpec spec) {
        String ns = spec.namespace() != null ? spec.namespace() : namespace();
        KoloJobSpec placed = spec.namespace() != null ? spec : spec.inNamespace(ns);
        return call("submit job " + spec.name(), () -> {
            StatusReader.Lookup existing = StatusReader.lookup(client, ns, spec.name());
            if (existing.kolo().isPresent()) {
                throw new KubernetesJobException("a job named " + spec.name() + " already exists in namespace " + ns
                        + ": delete it first (kolo k8s delete " + spec.name() + ") or choose another name");
            }
            if (existing.otherKind() != null) {
                throw new KubernetesJobException("cannot submit job " + spec.name() + ": a " + existing.otherKind()
                        + " named " + spec.name() + " that kolo k8s did not create already exists in namespace " + ns
                        + ": choose another job name, or delete that " + existing.otherKind() + " with kubectl");
            }
            awaitLeftovers(ns, spec.name());
            if (placed.mpiJob()) {
                GenericKubernetesResource mpi = Manifests.mpiJob(placed);
                // Without the operator's CRD the client fails already when it resolves the kind, with no HTTP code.
                var mpiJobs = StatusReader.mpiJobs(client, ns, placed.mode()).orElseThrow(() -> noMpiJobKind(ns,
                        placed.mode()));
                try {
                    mpiJobs.resource(mpi).create();
                } catch (KubernetesClientException e) {
                    if (e.getCode() == 404) {
                        throw noMpiJobKind(ns, placed.mode());
                    }
                    throw e;
                }
            } else {
                Job job = client.batch().v1().jobs().inNamespace(ns).resource(Manifests.indexedJob(placed, true))
                        .create();
                var owner = Manifests.ownedBy(job);
                try {
                    var secret = Manifests.secret(placed, Manifests.newSecret(), owner);
                    create(placed, "Secret", secret.getMetadata().getName(),
                            () -> client.secrets().inNamespace(ns).resource(secret).create());
                    create(placed, "Service", spec.name(), () -> client.services().inNamespace(ns)
                            .resource(Manifests.headlessService(placed, owner)).create());
                    client.batch().v1().jobs().inNamespace(ns).withName(spec.name())
                            .edit(j -> {
                                j.getSpec().setSuspend(false);
                                return j;
                            });
                } catch (RuntimeException e) {
                    // Else the suspended Job stays, and a second submit says the job already exists.
                    client.batch().v1().jobs().inNamespace(ns).withName(spec.name())
                            .withPropagationPolicy(DeletionPropagation.BACKGROUND).delete();
                    throw e;
                }
            }
            return new KoloJob(client, new StatusReader.Target(ns, spec.name(), placed.mode(), placed.workers(),
                    placed.slots(), placed.dashboardPort()));
        });
    }

    /**
     * The cluster lacks the MPIJob version {@code mode} makes. The two operators' CRDs share one name
     * ({@code mpijobs.kubeflow.org}), so a cluster has one or the other: the line names the mode that fits it.
     */
    private KubernetesJobException noMpiJobKind(String ns, KoloJobSpec.Mode mode) {
        KoloJobSpec.Mode other = mode == KoloJobSpec.Mode.MPIJOB ? KoloJobSpec.Mode.MPIJOB_V1 : KoloJobSpec.Mode.MPIJOB;
        String wanted = "this cluster has no MPIJob kind (" + Manifests.mpiJobApi(mode) + ")";
        if (StatusReader.mpiJobs(client, ns, other).isPresent()) {
            return new KubernetesJobException(wanted + "; its MPIJob is " + Manifests.mpiJobApi(other) + ", "
                    + operator(other) + "'s: use --mode " + other.flag());
        }
        return new KubernetesJobException(wanted + ": install " + operator(mode) + ", or use --mode operator-free");
    }

    /** Which operator runs MPIJobs of this mode. */
    static String operator(KoloJobSpec.Mode mode) {
        return mode == KoloJobSpec.Mode.MPIJOB_V1 ? "the Kubeflow training operator" : "the MPI Operator";
    }

    /**
     * Waits while an earlier job of this name is still being deleted: deleting a Job or MPIJob leaves its pods and the
     * objects made for it to the garbage collector, and a new job must neither fail on the old ones nor meet the old
     * pods. An MPIJob's include the MPI Operator's own, which carry no Kolo label (see {@link #leftovers}).
     */
    private void awaitLeftovers(String ns, String name) {
        long deadline = System.nanoTime() + leftoverWait.toNanos();
        for (List<Leftover> left = leftovers(ns, name); !left.isEmpty(); left = leftovers(ns, name)) {
            if (System.nanoTime() > deadline) {
                boolean kolos = left.stream().anyMatch(l -> !l.operators());
                boolean operators = left.stream().anyMatch(Leftover::operators);
                throw new KubernetesJobException("cannot submit job " + name + ": an earlier job " + name + " is still"
                        + " being deleted (" + left.getFirst().what() + (left.size() > 1 ? " and " + (left.size() - 1)
                        + " more objects" : "") + " after " + leftoverWait.toSeconds() + " s); wait, or see "
                        + (kolos ? "kubectl get pods,services,secrets -l " + Manifests.JOB_LABEL + "=" + name : "")
                        + (kolos && operators ? " and " : "")
                        + (operators ? "kubectl get jobs,services,configmaps,secrets -l " + OPERATOR_APP_LABEL + "="
                        + name + " (the MPIJob operator's)" : ""));
            }
            try {
                Thread.sleep(200);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new KubernetesJobException("interrupted while waiting for the earlier job " + name
                        + " to be deleted", e);
            }
        }
    }

    /** One object of an earlier job still there; {@code operators}: made by the MPI Operator, not by kolo k8s. */
    private record Leftover(String what, boolean operators) {
    }

    /** The label the MPI Operator and the training operator put on the objects they make for an MPIJob but its pods. */
    static final String OPERATOR_APP_LABEL = "app";
    /** The label the MPI Operator puts on an MPIJob's pods. */
    static final String OPERATOR_JOB_LABEL = "training.kubeflow.org/job-name";

    private List<Leftover> leftovers(String ns, String name) {
        List<Leftover> left = new ArrayList<>();
        Set<String> pods = new LinkedHashSet<>();
        for (String label : List.of(Manifests.JOB_LABEL, OPERATOR_JOB_LABEL)) {
            client.pods().inNamespace(ns).withLabel(label, name).list().getItems()
                    .forEach(p -> pods.add(p.getMetadata().getName()));
        }
        pods.forEach(p -> left.add(new Leftover("pod " + p, false)));
        client.services().inNamespace(ns).withLabel(Manifests.JOB_LABEL, name).list().getItems()
                .forEach(o -> left.add(new Leftover("Service " + o.getMetadata().getName(), false)));
        client.secrets().inNamespace(ns).withLabel(Manifests.JOB_LABEL, name).list().getItems()
                .forEach(o -> left.add(new Leftover("Secret " + o.getMetadata().getName(), false)));
        // The operator's launcher Job, workers' Service, hostfile ConfigMap and SSH Secret: labelled app=NAME, which
        // anyone may use, so only those the MPIJob of this name owns count.
        List<HasMetadata> operators = new ArrayList<>();
        operators.addAll(client.batch().v1().jobs().inNamespace(ns).withLabel(OPERATOR_APP_LABEL, name).list()
                .getItems());
        operators.addAll(client.services().inNamespace(ns).withLabel(OPERATOR_APP_LABEL, name).list().getItems());
        operators.addAll(client.configMaps().inNamespace(ns).withLabel(OPERATOR_APP_LABEL, name).list().getItems());
        operators.addAll(client.secrets().inNamespace(ns).withLabel(OPERATOR_APP_LABEL, name).list().getItems());
        operators.stream().filter(o -> ownedByMpiJob(o, name))
                .forEach(o -> left.add(new Leftover(o.getKind() + " " + o.getMetadata().getName(), true)));
        return left;
    }

    private static boolean ownedByMpiJob(HasMetadata o, String name) {
        return o.getMetadata().getOwnerReferences() != null && o.getMetadata().getOwnerReferences().stream()
                .anyMatch(r -> Manifests.MPIJOB_KIND.equals(r.getKind()) && name.equals(r.getName())
                        && r.getApiVersion() != null && r.getApiVersion().startsWith("kubeflow.org/"));
    }

    /** Creates one object of the job; one that exists already belongs to someone else, and is named as such. */
    private static void create(KoloJobSpec spec, String kind, String name, Runnable create) {
        try {
            create.run();
        } catch (KubernetesClientException e) {
            if (e.getCode() == 409) {
                throw new KubernetesJobException("cannot submit job " + spec.name() + ": a " + kind + " named " + name
                        + " already exists in namespace " + spec.namespace() + " (not made by kolo k8s for this job):"
                        + " choose another job name, or delete that " + kind, e);
            }
            throw e;
        }
    }

    /**
     * The job called {@code name} in {@code namespace} (null: the default one; IllegalArgumentException when it is not
     * a namespace name).
     */
    public KoloJob get(String name, String namespace) {
        KoloJobSpec.checkNamespace(namespace);
        String ns = namespace != null ? namespace : namespace();
        return call("find job " + name, () -> {
            StatusReader.Lookup found = StatusReader.lookup(client, ns, name);
            if (found.kolo().isEmpty() && found.otherKind() != null) {
                throw new KubernetesJobException("the " + found.otherKind() + " " + name + " in namespace " + ns
                        + " was not created by kolo k8s (it has no label " + Manifests.JOB_LABEL + "=" + name
                        + "): kolo k8s leaves it alone; use kubectl for it");
            }
            return found.kolo().map(t -> new KoloJob(client, t)).orElseThrow(() -> new KubernetesJobException(
                    "no Kolo job named " + name + " in namespace " + ns + " (kolo k8s list shows them)"));
        });
    }

    /** Every Kolo job in {@code namespace} (null: the default one; IllegalArgumentException when not a namespace name). */
    public List<KoloJob> list(String namespace) {
        KoloJobSpec.checkNamespace(namespace);
        String ns = namespace != null ? namespace : namespace();
        return call("list jobs", () -> StatusReader.list(client, ns).stream().map(t -> new KoloJob(client, t))
                .toList());
    }

    /** Runs a request, turning the client's exceptions into one line. */
    static <T> T call(KubernetesClient client, String what, Supplier<T> request) {
        try {
            return request.get();
        } catch (KubernetesClientException e) {
            throw explain(client, what, e);
        }
    }

    private <T> T call(String what, Supplier<T> request) {
        return call(client, what, request);
    }

    static KubernetesJobException explain(KubernetesClient client, String what, KubernetesClientException e) {
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof ConnectException || t instanceof HttpConnectTimeoutException
                    || t instanceof java.net.UnknownHostException || t instanceof java.net.http.HttpTimeoutException
                    || t instanceof java.net.NoRouteToHostException) {
                return new KubernetesJobException("cannot reach the Kubernetes API server at " + client.getMasterUrl()
                        + " to " + what + ": " + t.getClass().getSimpleName() + (t.getMessage() == null ? ""
                        : " (" + t.getMessage() + ")") + "; is the cluster up, and is this the right kubeconfig"
                        + " context?", e);
            }
        }
        String status = e.getStatus() != null && e.getStatus().getMessage() != null ? e.getStatus().getMessage()
                : e.getMessage();
        return new KubernetesJobException("cannot " + what + ": " + (e.getCode() > 0 ? "HTTP " + e.getCode() + ": "
                : "") + status.lines().findFirst().orElse(""), e);
    }

    @Override
    public void close() {
        if (owned) {
            client.close();
        }
    }
}
