package io.kolo.k8s;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerBuilder;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.EnvVarBuilder;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceBuilder;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.ResourceRequirements;
import io.fabric8.kubernetes.api.model.ResourceRequirementsBuilder;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.api.model.batch.v1.JobBuilder;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.kolo.launch.JobSecret;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The Kubernetes objects of a {@link KoloJobSpec}. Operator-free: an Indexed {@code batch/v1} Job whose pod {@code i}
 * runs {@code kolo run --nnodes W} as node {@code i} (its index, from {@code JOB_COMPLETION_INDEX}), a headless
 * Service that gives pod 0 the stable name the others meet at ({@code NAME-0.NAME}), and a Secret with the job
 * secret; the Service and Secret are owned by the Job, so deleting the Job deletes everything. MPIJob: one
 * {@code kubeflow.org/v2beta1} MPIJob whose launcher runs {@code kolo run} over the operator's hostfile and SSH keys,
 * or one {@code kubeflow.org/v1} MPIJob whose launcher runs it over the hostfile and {@code kubectl exec} agent.
 */
final class Manifests {
    static final String JOB_LABEL = "kolo.io/job";
    static final String ROLE_LABEL = "kolo.io/role";
    static final String MANAGED_BY = "app.kubernetes.io/managed-by";
    static final String SECRET_KEY = "secret";
    static final String SLOTS_ANNOTATION = "kolo.io/slots";
    static final String WORKERS_ANNOTATION = "kolo.io/workers";
    /** The port of the job's live page when asked for, on the pod whose kolo run serves it. */
    static final String DASHBOARD_ANNOTATION = "kolo.io/dashboard-port";
    static final String DASHBOARD_PORT_NAME = "dashboard";
    static final int RENDEZVOUS_PORT = KoloJobSpec.RENDEZVOUS_PORT;
    static final String MPIJOB_API = "kubeflow.org/v2beta1";
    static final String MPIJOB_V1_API = "kubeflow.org/v1";
    static final String MPIJOB_KIND = "MPIJob";
    /** Resources of the MPIJob's launcher pod: it only relays output, the ranks run on the workers. */
    static final Map<String, String> LAUNCHER_REQUESTS = Map.of("cpu", "500m", "memory", "512Mi");

    private Manifests() {
    }

    static Map<String, String> labels(KoloJobSpec spec, String role) {
        Map<String, String> labels = new LinkedHashMap<>();
        labels.put(JOB_LABEL, spec.name());
        labels.put(ROLE_LABEL, role);
        labels.put(MANAGED_BY, "kolo");
        return labels;
    }

    /**
     * How many workers of how many slots (what status and logs need to tell ranks from pods), and the dashboard's port
     * (what status needs for its port-forward line).
     */
    private static Map<String, String> annotations(KoloJobSpec spec) {
        Map<String, String> a = new LinkedHashMap<>();
        a.put(SLOTS_ANNOTATION, "" + spec.slots());
        a.put(WORKERS_ANNOTATION, "" + spec.workers());
        if (spec.dashboardPort() != null) {
            a.put(DASHBOARD_ANNOTATION, "" + spec.dashboardPort());
        }
        return a;
    }

    static String newSecret() {
        return JobSecret.generate().toHex();
    }

    static String secretName(KoloJobSpec spec) {
        return spec.name() + "-secret";
    }

    /** The Indexed Job; {@code suspend} holds its pods back until the Service and Secret exist. */
    static Job indexedJob(KoloJobSpec spec, boolean suspend) {
        List<String> run = new ArrayList<>(List.of(KoloJobSpec.KOLO, "run", "--nnodes", "" + spec.workers(),
                "--rendezvous", spec.name() + "-0." + spec.name() + ":" + RENDEZVOUS_PORT,
                "--np-per-node", "" + spec.slots(), "--start-timeout", "" + spec.startTimeoutSeconds()));
        // Every pod runs the same template: only node 0's kolo run, which holds the job's store, serves the page.
        run.addAll(dashboard(spec));
        run.addAll(program(spec));
        List<EnvVar> env = new ArrayList<>();
        env.add(new EnvVarBuilder().withName(JobSecret.VARIABLE).withNewValueFrom().withNewSecretKeyRef()
                .withName(secretName(spec)).withKey(SECRET_KEY).endSecretKeyRef().endValueFrom().build());
        env.addAll(userEnv(spec));
        ContainerBuilder c = new ContainerBuilder().withName("kolo").withImage(spec.image()).withCommand(run)
                .withEnv(env).withResources(resources(spec))
                .addNewPort().withName("rendezvous").withContainerPort(RENDEZVOUS_PORT).endPort();
        if (spec.dashboardPort() != null) {
            c.addNewPort().withName(DASHBOARD_PORT_NAME).withContainerPort(spec.dashboardPort()).endPort();
        }
        return new JobBuilder()
                .withNewMetadata().withName(spec.name()).withNamespace(spec.namespace())
                .withLabels(labels(spec, "job")).withAnnotations(annotations(spec)).endMetadata()
                .withNewSpec()
                .withCompletionMode("Indexed").withCompletions(spec.workers()).withParallelism(spec.workers())
                .withBackoffLimit(spec.backoffLimit()).withActiveDeadlineSeconds(spec.activeDeadlineSeconds())
                .withTtlSecondsAfterFinished(spec.ttlSecondsAfterFinished()).withSuspend(suspend ? true : null)
                .withNewTemplate().withNewMetadata().withLabels(labels(spec, "worker")).endMetadata()
                .withNewSpec().withSubdomain(spec.name()).withRestartPolicy("Never").withContainers(c.build())
                .endSpec().endTemplate().endSpec().build();
    }

    /** Pod 0's stable DNS name: {@code NAME-0.NAME}, including pods that are not ready yet. */
    static Service headlessService(KoloJobSpec spec, OwnerReference owner) {
        return new ServiceBuilder()
                .withNewMetadata().withName(spec.name()).withNamespace(spec.namespace())
                .withLabels(labels(spec, "rendezvous")).withOwnerReferences(owners(owner)).endMetadata()
                .withNewSpec().withClusterIP("None").withPublishNotReadyAddresses(true)
                .withSelector(Map.of(JOB_LABEL, spec.name(), ROLE_LABEL, "worker"))
                .addNewPort().withName("rendezvous").withPort(RENDEZVOUS_PORT).endPort().endSpec().build();
    }

    static Secret secret(KoloJobSpec spec, String hex, OwnerReference owner) {
        return new SecretBuilder()
                .withNewMetadata().withName(secretName(spec)).withNamespace(spec.namespace())
                .withLabels(labels(spec, "secret")).withOwnerReferences(owners(owner)).endMetadata()
                .withType("Opaque").withStringData(Map.of(SECRET_KEY, hex)).build();
    }

    static OwnerReference ownedBy(HasMetadata owner) {
        return new OwnerReferenceBuilder().withApiVersion(owner.getApiVersion()).withKind(owner.getKind())
                .withName(owner.getMetadata().getName()).withUid(owner.getMetadata().getUid())
                .withController(true).withBlockOwnerDeletion(true).build();
    }

    private static List<OwnerReference> owners(OwnerReference owner) {
        return owner == null ? null : List.of(owner);
    }

    /**
     * The MPIJob of the spec's version. v2beta1 (the MPI Operator): workers run sshd, the launcher waits for them to be
     * ready, then runs {@code kolo run} over the operator's SSH keys. v1 (the training operator, as Flyte's MPI plugin
     * makes it): workers run no sshd and only keep their pod alive; the launcher's {@code kolo run} starts the ranks in
     * them through the agent the operator names ({@code OMPI_MCA_plm_rsh_agent=/etc/mpi/kubexec.sh}, which runs
     * {@code kubectl exec}).
     */
    // Serialization.jsonMapper() is deprecated without a replacement that maps fabric8's model types as it does.
    @SuppressWarnings("deprecation")
    static GenericKubernetesResource mpiJob(KoloJobSpec spec) {
        boolean v1 = spec.mode() == KoloJobSpec.Mode.MPIJOB_V1;
        List<String> run = new ArrayList<>(List.of(KoloJobSpec.KOLO, "run", "-np", "" + spec.ranks(),
                "--start-timeout", "" + spec.startTimeoutSeconds()));
        // Ranks see only what kolo run passes on (over ssh, or through kubectl exec): the user's variables go by -x.
        for (String k : spec.env().keySet()) {
            run.addAll(List.of("-x", k));
        }
        run.addAll(dashboard(spec));
        run.addAll(program(spec));
        Map<String, Object> launcher = container("launcher", spec.image(), run, userEnv(spec),
                Map.of("requests", LAUNCHER_REQUESTS, "limits", LAUNCHER_REQUESTS));
        if (spec.dashboardPort() != null) {
            launcher.put("ports", List.of(Map.of("name", DASHBOARD_PORT_NAME, "containerPort", spec.dashboardPort())));
        }
        // v1: the operator's kubectl exec runs each rank in the worker pod's own environment, so the user's variables
        // are the pod's too. The worker itself only keeps the pod alive (the operator's own default command).
        Map<String, Object> worker = container("worker", spec.image(),
                v1 ? List.of("sleep", "365d") : List.of("/usr/sbin/sshd", "-De"), v1 ? userEnv(spec) : List.of(),
                Serialization.jsonMapper().convertValue(resources(spec), Map.class));
        Map<String, Object> runPolicy = new LinkedHashMap<>();
        runPolicy.put("cleanPodPolicy", "Running");
        runPolicy.put("backoffLimit", spec.backoffLimit());
        putIfSet(runPolicy, "activeDeadlineSeconds", spec.activeDeadlineSeconds());
        putIfSet(runPolicy, "ttlSecondsAfterFinished", spec.ttlSecondsAfterFinished());
        Map<String, Object> replicas = new LinkedHashMap<>();
        replicas.put("Launcher", replica(1, spec, "launcher", launcher));
        replicas.put("Worker", replica(spec.workers(), spec, "worker", worker));
        Map<String, Object> mpiSpec = new LinkedHashMap<>();
        mpiSpec.put("slotsPerWorker", spec.slots());
        if (!v1) {
            // v1 has neither: its launcher starts at once (its kubectl-delivery init container waits for the workers),
            // and it speaks only Open MPI's variables.
            mpiSpec.put("launcherCreationPolicy", "WaitForWorkersReady");
            mpiSpec.put("mpiImplementation", "OpenMPI");
        }
        mpiSpec.put("runPolicy", runPolicy);
        mpiSpec.put("mpiReplicaSpecs", replicas);
        return new GenericKubernetesResourceBuilder().withApiVersion(mpiJobApi(spec.mode())).withKind(MPIJOB_KIND)
                .withNewMetadata().withName(spec.name()).withNamespace(spec.namespace())
                .withLabels(labels(spec, "job")).withAnnotations(annotations(spec)).endMetadata()
                .withAdditionalProperties(Map.of("spec", mpiSpec)).build();
    }

    /** The API version of an MPIJob of this mode: the MPI Operator's v2beta1 or the training operator's v1. */
    static String mpiJobApi(KoloJobSpec.Mode mode) {
        return switch (mode) {
            case MPIJOB -> MPIJOB_API;
            case MPIJOB_V1 -> MPIJOB_V1_API;
            case OPERATOR_FREE -> throw new IllegalArgumentException("an operator-free job is not an MPIJob");
        };
    }

    /**
     * kolo run's options that serve the job's page to other pods: on all addresses, since kubectl port-forward reaches
     * the pod from outside its loopback, and with the token kolo run then requires.
     */
    private static List<String> dashboard(KoloJobSpec spec) {
        return spec.dashboardPort() == null ? List.of()
                : List.of("--dashboard", "" + spec.dashboardPort(), "--dashboard-bind", "0.0.0.0");
    }

    private static Map<String, Object> replica(int count, KoloJobSpec spec, String role, Map<String, Object> c) {
        Map<String, Object> r = new LinkedHashMap<>();
        r.put("replicas", count);
        r.put("restartPolicy", "Never");
        // Ordered maps, so that --dry-run prints each object as kubectl would: metadata first, a variable's name first.
        Map<String, Object> template = new LinkedHashMap<>();
        template.put("metadata", Map.of("labels", labels(spec, role)));
        template.put("spec", Map.of("containers", List.of(c)));
        r.put("template", template);
        return r;
    }

    private static Map<String, Object> container(String name, String image, List<String> command, List<EnvVar> env,
                                                 Map<?, ?> resources) {
        Map<String, Object> c = new LinkedHashMap<>();
        c.put("name", name);
        c.put("image", image);
        c.put("command", command);
        if (!env.isEmpty()) {
            c.put("env", env.stream().map(e -> {
                Map<String, String> v = new LinkedHashMap<>();
                v.put("name", e.getName());
                v.put("value", e.getValue());
                return v;
            }).toList());
        }
        if (!resources.isEmpty()) {
            c.put("resources", resources);
        }
        return c;
    }

    private static void putIfSet(Map<String, Object> map, String key, Object value) {
        if (value != null) {
            map.put(key, value);
        }
    }

    /** What kolo run starts: {@code -cp}/{@code -jar} forms as given, anything else as a command after "--". */
    static List<String> program(KoloJobSpec spec) {
        String first = spec.command().getFirst();
        if (first.equals("--") || first.equals("-cp") || first.equals("-jar") || first.equals("--example")) {
            return spec.command();
        }
        List<String> cmd = new ArrayList<>(List.of("--"));
        cmd.addAll(spec.command());
        return cmd;
    }

    private static List<EnvVar> userEnv(KoloJobSpec spec) {
        return spec.env().entrySet().stream()
                .map(e -> new EnvVarBuilder().withName(e.getKey()).withValue(e.getValue()).build()).toList();
    }

    /** Requests as asked; limits the same unless given, so the pods get the Guaranteed class a job wants. */
    static ResourceRequirements resources(KoloJobSpec spec) {
        Map<String, Quantity> requests = new LinkedHashMap<>();
        Map<String, Quantity> limits = new LinkedHashMap<>();
        if (spec.cpu() != null) {
            requests.put("cpu", new Quantity(spec.cpu()));
        }
        if (spec.memory() != null) {
            requests.put("memory", new Quantity(spec.memory()));
        }
        String limitCpu = spec.limitCpu() != null ? spec.limitCpu() : spec.cpu();
        String limitMemory = spec.limitMemory() != null ? spec.limitMemory() : spec.memory();
        if (limitCpu != null) {
            limits.put("cpu", new Quantity(limitCpu));
        }
        if (limitMemory != null) {
            limits.put("memory", new Quantity(limitMemory));
        }
        if (spec.gpus() > 0) {
            requests.put("nvidia.com/gpu", new Quantity("" + spec.gpus()));
            limits.put("nvidia.com/gpu", new Quantity("" + spec.gpus()));
        }
        ResourceRequirementsBuilder b = new ResourceRequirementsBuilder();
        if (!requests.isEmpty()) {
            b.withRequests(requests);
        }
        if (!limits.isEmpty()) {
            b.withLimits(limits);
        }
        return b.build();
    }

    /** The objects as one YAML stream ({@code kubectl apply -f} reads it). */
    static String yaml(List<? extends HasMetadata> objects) {
        StringBuilder sb = new StringBuilder();
        for (HasMetadata o : objects) {
            String y = Serialization.asYaml(o);
            sb.append(y.startsWith("---") ? y : "---\n" + y);
            if (!y.endsWith("\n")) {
                sb.append('\n');
            }
        }
        return sb.toString();
    }

    /** What {@code submit} creates for {@code spec}, as {@code --dry-run} prints it (owner references come at submit). */
    static List<HasMetadata> objects(KoloJobSpec spec, String secretHex) {
        if (spec.mpiJob()) {
            return List.of(mpiJob(spec));
        }
        return List.of(secret(spec, secretHex, null), headlessService(spec, null), indexedJob(spec, false));
    }
}
