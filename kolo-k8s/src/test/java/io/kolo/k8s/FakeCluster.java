package io.kolo.k8s;

import io.fabric8.kubernetes.api.model.ContainerStateBuilder;
import io.fabric8.kubernetes.api.model.ContainerStatusBuilder;
import io.fabric8.kubernetes.api.model.EventBuilder;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodConditionBuilder;
import io.fabric8.kubernetes.api.model.PodTemplateSpec;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.api.model.batch.v1.JobConditionBuilder;
import io.fabric8.kubernetes.client.NamespacedKubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.CustomResourceDefinitionContext;
import io.fabric8.kubernetes.client.server.mock.KubernetesMixedDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import io.fabric8.mockwebserver.ServerRequest;
import io.fabric8.mockwebserver.ServerResponse;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.Set;
import java.util.function.UnaryOperator;

/**
 * fabric8's mock API server in CRUD mode, and this test playing the rest of Kubernetes: the Job controller and the
 * MPI Operator (they make pods from templates), the kubelet (pod phases, container states, logs), the scheduler's
 * and kubelet's events, and the garbage collector (owner references). Namespace "test".
 */
final class FakeCluster implements AutoCloseable {
    static final String NS = "test";
    // The mock server logs every request at INFO; kept in a field so the setting is not collected with the logger.
    private static final java.util.logging.Logger QUIET = java.util.logging.Logger.getLogger("io.fabric8.mockwebserver");

    static {
        QUIET.setLevel(java.util.logging.Level.WARNING);
    }
    final KubernetesMockServer server;
    final NamespacedKubernetesClient client;
    private final Map<ServerRequest, Queue<ServerResponse>> responses = new HashMap<>();

    /** The API version of the cluster's MPIJob kind (v2beta1: the MPI Operator; v1: the training operator); or null. */
    final String mpiApi;

    FakeCluster() {
        this(true);
    }

    /** @param mpiOperator whether the cluster has the MPI Operator's MPIJob kind */
    FakeCluster(boolean mpiOperator) {
        this(mpiOperator ? "v2beta1" : null);
    }

    /**
     * A cluster with the Kubeflow training operator's {@code kubeflow.org/v1} MPIJob and not the MPI Operator's: the
     * two CRDs share one name ({@code mpijobs.kubeflow.org}), so a real cluster has one or the other.
     */
    static FakeCluster withTrainingOperator() {
        return new FakeCluster("v1");
    }

    private FakeCluster(String mpiVersion) {
        mpiApi = mpiVersion == null ? null : "kubeflow.org/" + mpiVersion;
        boolean mpiOperator = mpiVersion != null;
        server = new KubernetesMockServer(new Context(Serialization.jsonMapper()), new MockWebServer(), responses,
                new KubernetesMixedDispatcher(responses), false);
        server.init();
        if (mpiOperator) {
            server.expectCustomResource(new CustomResourceDefinitionContext.Builder().withGroup("kubeflow.org")
                .withVersion(mpiVersion).withKind("MPIJob").withPlural("mpijobs").withScope("Namespaced").withStatusSubresource(true).build());
        }
        // The test's own client waits longer than the CLI's 15 s: on a loaded 2-core CI machine the mock server
        // has answered discovery requests late, and the test, not the server, should decide what is too slow.
        io.fabric8.kubernetes.client.Config config = new io.fabric8.kubernetes.client.ConfigBuilder(
                server.createClient().getConfiguration()).withRequestTimeout(120_000).withConnectionTimeout(30_000)
                .build();
        client = new io.fabric8.kubernetes.client.KubernetesClientBuilder().withConfig(config).build()
                .adapt(NamespacedKubernetesClient.class).inNamespace(NS);
        // Resolve the MPIJob kind once, before any test or CLI thread does: the client caches it, and the CLI and
        // the test asking for it at the same moment (both waiting on one discovery request) hung CI.
        if (mpiOperator) {
            client.genericKubernetesResources(mpiApi, "MPIJob").list();
        }
    }

    KubernetesJobs jobs() {
        return KubernetesJobs.using(client);
    }

    /** The Job controller: once the Indexed Job runs (not suspended), its pods NAME-i, owned by it. */
    List<String> startIndexedJob(String name) throws InterruptedException {
        Job job = null;
        // Up to 30 s: a kolo k8s started as a fresh JVM on a loaded 2-core machine took over 5 s to submit.
        for (int i = 0; i < 600; i++) {
            job = client.batch().v1().jobs().withName(name).get();
            if (job != null && !Boolean.TRUE.equals(job.getSpec().getSuspend())) {
                break;
            }
            Thread.sleep(50);
        }
        if (job == null || Boolean.TRUE.equals(job.getSpec().getSuspend())) {
            throw new AssertionError("job " + name + " was not created and let go");
        }
        List<String> pods = new ArrayList<>();
        for (int i = 0; i < job.getSpec().getCompletions(); i++) {
            Pod p = pod(name + "-" + i, job.getSpec().getTemplate(), job, Map.of(StatusReader.COMPLETION_INDEX, "" + i));
            p.getSpec().setHostname(name + "-" + i);
            client.pods().resource(p).create();
            pods.add(p.getMetadata().getName());
        }
        return pods;
    }

    /**
     * The MPI Operator (or the training operator): worker pods NAME-worker-i, then the launcher NAME-launcher. The
     * training operator also gives the launcher's first container the variables that name its hostfile and its
     * {@code kubectl exec} agent (mpijob_controller.go, newLauncher).
     */
    @SuppressWarnings("unchecked")
    List<String> startMpiJob(String name) {
        GenericKubernetesResource mpi = client.genericKubernetesResources(mpiApi, "MPIJob").withName(name).get();
        Map<String, Object> replicas = (Map<String, Object>) ((Map<String, Object>) mpi.getAdditionalProperties()
                .get("spec")).get("mpiReplicaSpecs");
        List<String> pods = new ArrayList<>();
        Map<String, Object> worker = (Map<String, Object>) replicas.get("Worker");
        PodTemplateSpec wt = Serialization.jsonMapper().convertValue(worker.get("template"), PodTemplateSpec.class);
        for (int i = 0; i < (Integer) worker.get("replicas"); i++) {
            Pod p = pod(name + "-worker-" + i, wt, mpi, Map.of());
            p.getMetadata().getLabels().putAll(operatorLabels(name, "worker"));
            p.getMetadata().getLabels().put(StatusReader.REPLICA_INDEX, "" + i);
            client.pods().resource(p).create();
            pods.add(p.getMetadata().getName());
        }
        PodTemplateSpec lt = Serialization.jsonMapper().convertValue(((Map<String, Object>) replicas.get("Launcher"))
                .get("template"), PodTemplateSpec.class);
        Pod launcher = pod(name + "-launcher", lt, mpi, Map.of());
        launcher.getMetadata().getLabels().putAll(operatorLabels(name, "launcher"));
        if (mpiApi.endsWith("/v1")) {
            List<io.fabric8.kubernetes.api.model.EnvVar> env = new ArrayList<>(launcher.getSpec().getContainers()
                    .getFirst().getEnv());
            env.add(new io.fabric8.kubernetes.api.model.EnvVar("OMPI_MCA_plm_rsh_agent", "/etc/mpi/kubexec.sh", null));
            env.add(new io.fabric8.kubernetes.api.model.EnvVar("OMPI_MCA_orte_default_hostfile", "/etc/mpi/hostfile",
                    null));
            launcher.getSpec().getContainers().getFirst().setEnv(env);
        }
        client.pods().resource(launcher).create();
        pods.add(launcher.getMetadata().getName());
        return pods;
    }

    /** What the MPI Operator adds to the labels of an MPIJob's pods (mpi_job_controller.go, defaultLabels). */
    private static Map<String, String> operatorLabels(String job, String role) {
        return Map.of("training.kubeflow.org/operator-name", "mpi-operator", "training.kubeflow.org/job-name", job,
                "training.kubeflow.org/job-role", role);
    }

    /**
     * The MPI Operator's other objects of an MPIJob, as it makes them: the launcher's Job NAME-launcher, the workers'
     * headless Service NAME, the hostfile's ConfigMap NAME-config and the SSH keys' Secret NAME-ssh, each labelled
     * {@code app: NAME} and owned by the MPIJob (none carries a Kolo label).
     */
    void mpiOperatorObjects(String name) {
        GenericKubernetesResource mpi = client.genericKubernetesResources(mpiApi, "MPIJob").withName(name).get();
        var owner = Manifests.ownedBy(mpi);
        var meta = new io.fabric8.kubernetes.api.model.ObjectMetaBuilder().withNamespace(NS)
                .withLabels(Map.of("app", name)).withOwnerReferences(owner);
        client.batch().v1().jobs().resource(new io.fabric8.kubernetes.api.model.batch.v1.JobBuilder()
                .withMetadata(meta.withName(name + "-launcher").build()).withNewSpec().withNewTemplate()
                .withNewSpec().addNewContainer().withName("launcher").withImage("i").endContainer()
                .withRestartPolicy("Never").endSpec().endTemplate().endSpec().build()).create();
        client.services().resource(new io.fabric8.kubernetes.api.model.ServiceBuilder()
                .withMetadata(meta.withName(name).build()).withNewSpec().withClusterIP("None")
                .withSelector(Map.of("training.kubeflow.org/job-name", name)).endSpec().build()).create();
        client.configMaps().resource(new io.fabric8.kubernetes.api.model.ConfigMapBuilder()
                .withMetadata(meta.withName(name + "-config").build()).withData(Map.of("hostfile",
                        name + "-worker-0." + name + "." + NS + ".svc slots=2\n")).build()).create();
        client.secrets().resource(new io.fabric8.kubernetes.api.model.SecretBuilder()
                .withMetadata(meta.withName(name + "-ssh").build()).withType("kubernetes.io/ssh-auth")
                .withStringData(Map.of("ssh-privatekey", "not a key")).build()).create();
    }

    private static Pod pod(String name, PodTemplateSpec t, HasMetadata owner, Map<String, String> annotations) {
        return new PodBuilder().withNewMetadata().withName(name).withNamespace(NS)
                .withLabels(new HashMap<>(t.getMetadata().getLabels())).withAnnotations(annotations)
                .withOwnerReferences(Manifests.ownedBy(owner)).endMetadata()
                .withSpec(t.getSpec()).withNewStatus().withPhase("Pending").endStatus().build();
    }

    private void status(String pod, UnaryOperator<Pod> change) {
        client.pods().withName(pod).editStatus(change);
    }

    void schedule(String pod, String node) {
        client.pods().withName(pod).edit(p -> {
            p.getSpec().setNodeName(node);
            return p;
        });
        status(pod, p -> {
            p.getStatus().setConditions(List.of(new PodConditionBuilder().withType("PodScheduled").withStatus("True")
                    .build()));
            return p;
        });
    }

    void unschedulable(String pod, String message) {
        status(pod, p -> {
            p.getStatus().setConditions(List.of(new PodConditionBuilder().withType("PodScheduled").withStatus("False")
                    .withReason("Unschedulable").withMessage(message).build()));
            return p;
        });
    }

    void running(String pod) {
        container(pod, "Running", new ContainerStateBuilder().withNewRunning().withStartedAt("2026-01-01T00:00:00Z")
                .endRunning().build(), null, 0);
    }

    void waiting(String pod, String reason, String message) {
        container(pod, "Pending", new ContainerStateBuilder().withNewWaiting().withReason(reason).withMessage(message)
                .endWaiting().build(), null, 0);
    }

    void terminated(String pod, int code, String reason, String finishedAt) {
        container(pod, code == 0 ? "Succeeded" : "Failed", new ContainerStateBuilder().withNewTerminated()
                .withExitCode(code).withReason(reason).withFinishedAt(finishedAt).endTerminated().build(), null, 0);
    }

    void crashLoop(String pod, int restarts, int lastExit) {
        container(pod, "Running", new ContainerStateBuilder().withNewWaiting().withReason("CrashLoopBackOff")
                .withMessage("back-off 5m0s restarting failed container").endWaiting().build(),
                new ContainerStateBuilder().withNewTerminated().withExitCode(lastExit).withReason("Error")
                        .endTerminated().build(), restarts);
    }

    void oomKilledBefore(String pod) {
        container(pod, "Running", new ContainerStateBuilder().withNewRunning().endRunning().build(),
                new ContainerStateBuilder().withNewTerminated().withExitCode(137).withReason("OOMKilled")
                        .endTerminated().build(), 1);
    }

    private void container(String pod, String phase, io.fabric8.kubernetes.api.model.ContainerState state,
                           io.fabric8.kubernetes.api.model.ContainerState last, int restarts) {
        status(pod, p -> {
            p.getStatus().setPhase(phase);
            p.getStatus().setContainerStatuses(List.of(new ContainerStatusBuilder()
                    .withName(p.getSpec().getContainers().getFirst().getName())
                    .withImage(p.getSpec().getContainers().getFirst().getImage())
                    .withState(state).withLastState(last).withRestartCount(restarts).build()));
            return p;
        });
    }

    /** What the pod's container printed: served for plain, tailed, previous and followed log requests. */
    void log(String pod, String text) {
        String base = "/api/v1/namespaces/" + NS + "/pods/" + pod + "/log?pretty=false";
        for (String query : List.of("", "&follow=true", "&tailLines=" + Explainer.logLines(),
                "&previous=true&tailLines=" + Explainer.logLines())) {
            server.expect().get().withPath(base + query).andReturn(200, text).always();
        }
    }

    void event(String pod, String reason, String message) {
        client.v1().events().resource(new EventBuilder().withNewMetadata().withGenerateName(pod + ".")
                .withNamespace(NS).endMetadata().withType("Warning").withReason(reason).withMessage(message)
                .withNewInvolvedObject().withKind("Pod").withName(pod).withNamespace(NS).endInvolvedObject().build())
                .create();
    }

    /** A warning event of the job itself, as the Job controller records one when it cannot create a pod. */
    void jobEvent(String kind, String job, String reason, String message) {
        client.v1().events().resource(new EventBuilder().withNewMetadata().withGenerateName(job + ".")
                .withNamespace(NS).endMetadata().withType("Warning").withReason(reason).withMessage(message)
                .withNewInvolvedObject().withKind(kind).withName(job).withNamespace(NS).endInvolvedObject().build())
                .create();
    }

    void node(String name, String cpu, String memory) {
        client.nodes().resource(new NodeBuilder().withNewMetadata().withName(name).endMetadata().withNewStatus()
                .withAllocatable(Map.of("cpu", new Quantity(cpu), "memory", new Quantity(memory))).endStatus().build())
                .create();
    }

    /** The Job controller's verdict. */
    void jobCondition(String job, String type, String reason, String message) {
        client.batch().v1().jobs().withName(job).editStatus(j -> {
            if (j.getStatus() == null) {
                j.setStatus(new io.fabric8.kubernetes.api.model.batch.v1.JobStatus());
            }
            j.getStatus().setConditions(List.of(new JobConditionBuilder().withType(type).withStatus("True")
                    .withReason(reason).withMessage(message).build()));
            return j;
        });
    }

    /** The MPI Operator's verdict on an MPIJob. */
    @SuppressWarnings("unchecked")
    void mpiJobCondition(String job, String type, String reason) {
        client.genericKubernetesResources(mpiApi, "MPIJob").withName(job).editStatus(m -> {
            m.getAdditionalProperties().put("status", Map.of("conditions", List.of(Map.of("type", type,
                    "status", "True", "reason", reason, "message", reason))));
            return m;
        });
    }

    /** The garbage collector: deletes, until nothing changes, whatever is owned by an object that is gone. */
    void collectGarbage() {
        boolean deleted = true;
        while (deleted) {
            deleted = false;
            Set<String> uids = new HashSet<>();
            List<HasMetadata> all = everything();
            all.forEach(o -> uids.add(o.getMetadata().getUid()));
            for (HasMetadata o : all) {
                if (o.getMetadata().getOwnerReferences() != null && !o.getMetadata().getOwnerReferences().isEmpty()
                        && o.getMetadata().getOwnerReferences().stream().noneMatch(r -> uids.contains(r.getUid()))) {
                    client.resource(o).delete();
                    deleted = true;
                }
            }
        }
    }

    /** Every object of the kinds a Kolo job, or the MPI Operator for it, makes. */
    List<HasMetadata> everything() {
        List<HasMetadata> all = new ArrayList<>();
        all.addAll(client.batch().v1().jobs().list().getItems());
        all.addAll(client.pods().list().getItems());
        all.addAll(client.services().list().getItems());
        all.addAll(client.secrets().list().getItems());
        all.addAll(client.configMaps().list().getItems());
        if (mpiApi != null) {
            all.addAll(client.genericKubernetesResources(mpiApi, "MPIJob").list().getItems());
        }
        return all;
    }

    /** The paths of the requests the server has had since the last call, oldest first. */
    List<String> requestPaths() throws InterruptedException {
        List<String> paths = new ArrayList<>();
        io.fabric8.mockwebserver.http.RecordedRequest r;
        while ((r = server.takeRequest(0, java.util.concurrent.TimeUnit.MILLISECONDS)) != null) {
            paths.add(r.getPath());
        }
        return paths;
    }

    @Override
    public void close() {
        client.close();
        try {
            server.destroy();
        } catch (IllegalStateException e) {
            if (e.getMessage() == null || !e.getMessage().startsWith("Unable to close")) {
                throw e;
            }
            // The mock server's watch listener waits up to a minute on its event loop for its sender to stop when a
            // client closes a watch (kubernetes-server-mock 8.0.0, WatchEventsListener.onClosed), and the server's
            // close gives up after 10 s. The test's assertions have run by now; only the fixture's teardown failed.
            System.err.println("FakeCluster: " + e.getMessage() + " (the mock server's watch teardown; ignored)");
        }
    }
}
