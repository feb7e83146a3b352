package io.kolo.k8s;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.networknt.schema.JsonSchema;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code --mode mpijob-v1}: the Kubeflow training operator's {@code kubeflow.org/v1} MPIJob, the kind Flyte's MPI plugin
 * creates. Checked against that operator's CRD (v1.9.0), and submitted, followed, listed and deleted on a mock cluster
 * that has that kind and not the MPI Operator's (the two CRDs share one name, so a real cluster has one of them).
 */
@Timeout(60)
class MpiJobV1Test {
    final FakeCluster cluster = FakeCluster.withTrainingOperator();

    @AfterEach
    void close() {
        cluster.close();
    }

    /** {@link SubmitAndFollowTest#SUBMIT} (2 workers of 2 slots) in {@code mode}, with {@code extra} options. */
    static String[] submit(String mode, String... extra) {
        List<String> a = new ArrayList<>(List.of(SubmitAndFollowTest.SUBMIT));
        a.addAll(1 + a.indexOf("train"), List.of("--mode", mode));
        a.addAll(a.indexOf("--"), List.of(extra));
        return a.toArray(String[]::new);
    }

    private static List<String> strings(JsonNode array) {
        List<String> l = new ArrayList<>();
        array.forEach(e -> l.add(e.asText()));
        return l;
    }

    @Test
    void theV1MpiJobIsValidAgainstTheTrainingOperatorsCrdWithWorkersThatRunNoSshd() throws Exception {
        JsonSchema schema = SchemaTest.mpiJobSchema(SchemaTest.V1_CRD);
        List<JsonNode> docs = SchemaTest.dryRun("--mode", "mpijob-v1");
        assertEquals(1, docs.size());
        JsonNode mpi = docs.getFirst();
        assertEquals("kubeflow.org/v1", mpi.path("apiVersion").asText());
        assertEquals("MPIJob", mpi.path("kind").asText());
        assertEquals(Set.of(), schema.validate(mpi));

        assertEquals(2, mpi.at("/spec/slotsPerWorker").asInt());
        assertEquals(3, mpi.at("/spec/mpiReplicaSpecs/Worker/replicas").asInt());
        assertEquals(1, mpi.at("/spec/mpiReplicaSpecs/Launcher/replicas").asInt());
        assertEquals("Running", mpi.at("/spec/runPolicy/cleanPodPolicy").asText());
        assertEquals(1, mpi.at("/spec/runPolicy/backoffLimit").asInt());
        assertEquals(7200, mpi.at("/spec/runPolicy/activeDeadlineSeconds").asInt());
        assertEquals(600, mpi.at("/spec/runPolicy/ttlSecondsAfterFinished").asInt());
        JsonNode launcher = mpi.at("/spec/mpiReplicaSpecs/Launcher/template/spec/containers/0");
        assertEquals(List.of("/opt/kolo/kolo", "run", "-np", "6", "--start-timeout", "300", "-x", "EPOCHS", "-cp",
                "/app/app.jar", "com.example.Train"), strings(launcher.path("command")));
        JsonNode worker = mpi.at("/spec/mpiReplicaSpecs/Worker/template/spec/containers/0");
        assertEquals(List.of("sleep", "365d"), strings(worker.path("command")), "a v1 worker runs no sshd");
        // kubectl exec runs a rank in the worker pod's own environment: the user's variables are the pod's.
        assertEquals("EPOCHS", worker.at("/env/0/name").asText());
        assertEquals("3", worker.at("/env/0/value").asText());
        assertEquals("2", worker.at("/resources/limits/nvidia.com~1gpu").asText());
        assertEquals("launcher", mpi.at("/spec/mpiReplicaSpecs/Launcher/template/metadata/labels/kolo.io~1role")
                .asText());

        // The check can fail: v2beta1's own fields, and a misspelt one, are not v1's.
        ObjectNode v2Field = mpi.deepCopy();
        ((ObjectNode) v2Field.get("spec")).put("launcherCreationPolicy", "WaitForWorkersReady");
        assertFalse(schema.validate(v2Field).isEmpty(), "launcherCreationPolicy is v2beta1's only");
        ObjectNode typo = mpi.deepCopy();
        ((ObjectNode) typo.get("spec")).put("slotPerWorker", 2);
        assertFalse(schema.validate(typo).isEmpty(), "a misspelt field must not validate");
        // Nor does the v2beta1 MPIJob pass as a v1 one: the two modes really differ.
        ObjectNode v2 = (ObjectNode) SchemaTest.dryRun("--mode", "mpijob").getFirst();
        v2.put("apiVersion", "kubeflow.org/v1");
        assertFalse(schema.validate(v2).isEmpty(), "the v2beta1 MPIJob must not validate against the v1 CRD");
    }

    @Test
    void aV1MpiJobIsSubmittedFollowedThroughItsLaunchersLogListedAndDeleted() throws Exception {
        CliRun run = CliRun.start(cluster, submit("mpijob-v1"));
        for (int i = 0; i < 600 && cluster.client.genericKubernetesResources("kubeflow.org/v1", "MPIJob")
                .withName("train").get() == null; i++) {
            Thread.sleep(50);
        }
        List<String> pods = cluster.startMpiJob("train");
        assertEquals(List.of("train-worker-0", "train-worker-1", "train-launcher"), pods);
        pods.forEach(cluster::running);
        cluster.log("train-launcher", "[0]<stdout>:hello\n[3]<stdout>:hello\n");
        cluster.mpiJobCondition("train", "Running", "MPIJobRunning");
        run.awaitErr("pod train-launcher (launcher): Running");
        CliRun status = CliRun.run(cluster, "status", "train");
        assertEquals("""
                job train (mpijob-v1): running
                  train-worker-0 (ranks 0-1): Running
                  train-worker-1 (ranks 2-3): Running
                  train-launcher (launcher): Running
                """, status.out(), status.toString());
        cluster.terminated("train-launcher", 0, "Completed", "2026-01-01T00:10:00Z");
        cluster.mpiJobCondition("train", "Succeeded", "MPIJobSucceeded");
        assertEquals(0, run.code(), run.toString());
        assertEquals(List.of("[0]<stdout>:hello", "[3]<stdout>:hello"), run.out().lines().sorted().toList());
        assertTrue(run.err().contains("kolo k8s: submitted job train (mpijob-v1, 2 x 2 ranks) in namespace test"),
                run.err());
        assertTrue(run.err().contains("kolo k8s: job train succeeded"), run.err());
        assertFalse(run.err().contains("why:"), run.err());

        CliRun rank3 = CliRun.run(cluster, "logs", "train", "--rank", "3");
        assertEquals("[3]<stdout>:hello\n", rank3.out(), rank3.toString());
        CliRun list = CliRun.run(cluster, "list");
        assertEquals("train\tmpijob-v1\t2x2\tsucceeded\texit 0\n", list.out(), list.toString());
        CliRun delete = CliRun.run(cluster, "delete", "train");
        assertEquals(0, delete.code(), delete.toString());
        cluster.collectGarbage();
        assertEquals(List.of(), cluster.everything().stream().map(o -> o.getKind() + "/" + o.getMetadata().getName())
                .toList());
    }

    /**
     * The launcher's kolo run could not start a rank (the operator's kubectl exec refused by RBAC): the job's exit code,
     * and kolo run's own one line about it, not the lines around it.
     */
    @Test
    void aLauncherThatCannotStartARankFailsTheJobWithItsExitCodeAndKoloRunsLine() throws Exception {
        assertEquals(0, CliRun.run(cluster, SubmitAndFollowTest.withDetach(submit("mpijob-v1"))).code());
        cluster.startMpiJob("train");
        List.of("train-worker-0", "train-worker-1").forEach(cluster::running);
        String line = "kolo: cannot start rank 2 on host train-worker-1 through the rsh agent /etc/mpi/kubexec.sh"
                + " (OMPI_MCA_plm_rsh_agent): Error from server (Forbidden): pods \"train-worker-1\" is forbidden:"
                + " cannot create resource \"pods/exec\"; terminating the other 3 ranks";
        cluster.log("train-launcher", "[0]<stdout>:starting\n" + line + "\n+ POD_NAME=train-worker-1\n");
        cluster.terminated("train-launcher", 127, "Error", "2026-01-01T00:01:00Z");
        cluster.mpiJobCondition("train", "Failed", "MPIJobFailed");
        CliRun status = CliRun.run(cluster, "status", "train");
        assertTrue(status.out().startsWith("job train (mpijob-v1): failed, exit code 127\n"), status.out());
        assertTrue(status.out().contains("  why: pod train-launcher (launcher) exited with code 127: " + line + "\n"),
                status.out());
    }

    @Test
    void eachMpiJobModeOnTheOtherOperatorsClusterNamesTheModeThatFits() throws Exception {
        CliRun v2 = CliRun.run(cluster, SubmitAndFollowTest.withDetach(submit("mpijob")));
        assertEquals(1, v2.code(), v2.toString());
        assertEquals("kolo k8s: this cluster has no MPIJob kind (kubeflow.org/v2beta1); its MPIJob is kubeflow.org/v1,"
                + " the Kubeflow training operator's: use --mode mpijob-v1\n", v2.err());
        try (FakeCluster mpiOperator = new FakeCluster()) {
            CliRun v1 = CliRun.run(mpiOperator, SubmitAndFollowTest.withDetach(submit("mpijob-v1")));
            assertEquals(1, v1.code(), v1.toString());
            assertEquals("kolo k8s: this cluster has no MPIJob kind (kubeflow.org/v1); its MPIJob is"
                    + " kubeflow.org/v2beta1, the MPI Operator's: use --mode mpijob\n", v1.err());
        }
        try (FakeCluster none = new FakeCluster(false)) {
            CliRun v1 = CliRun.run(none, SubmitAndFollowTest.withDetach(submit("mpijob-v1")));
            assertEquals(1, v1.code(), v1.toString());
            assertEquals("kolo k8s: this cluster has no MPIJob kind (kubeflow.org/v1): install the Kubeflow training"
                    + " operator, or use --mode operator-free\n", v1.err());
        }
        assertEquals(List.of(), cluster.everything(), "nothing created");
    }

    /** A v1 MPIJob of the same name that kolo k8s did not make (Flyte's, say) is named and left alone. */
    @Test
    void aV1MpiJobNotMadeByKoloIsLeftAlone() throws Exception {
        cluster.client.genericKubernetesResources("kubeflow.org/v1", "MPIJob").resource(
                new io.fabric8.kubernetes.api.model.GenericKubernetesResourceBuilder().withApiVersion("kubeflow.org/v1")
                        .withKind("MPIJob").withNewMetadata().withName("train").withNamespace(FakeCluster.NS)
                        .endMetadata().withAdditionalProperties(Map.of("spec", Map.of("mpiReplicaSpecs", Map.of())))
                        .build()).create();
        for (String cmd : List.of("status", "delete")) {
            CliRun r = CliRun.run(cluster, cmd, "train");
            assertEquals(1, r.code(), r.toString());
            assertEquals("kolo k8s: the MPIJob train in namespace test was not created by kolo k8s (it has no label"
                    + " kolo.io/job=train): kolo k8s leaves it alone; use kubectl for it\n", r.err());
        }
        assertEquals(1, cluster.everything().size());
    }
    /** No training operator acts on the MPIJob (its CRD installed, its controller not running): following says so. */
    @Test
    void aV1MpiJobThatGetsNoPodAsksWhetherTheTrainingOperatorRuns() throws Exception {
        CliRun run = CliRun.run(cluster, submit("mpijob-v1", "--start-timeout", "1"));
        assertEquals(1, run.code(), run.toString());
        assertEquals("kolo k8s: stopped following job train: none of its pods has appeared in 1 s (--start-timeout):"
                + " is the Kubeflow training operator running?; the job is left as it is: kolo k8s delete train, then"
                + " submit it again", run.err().lines().toList().getLast(), run.err());
    }

    /**
     * A submit right after a delete waits for the old job's launcher pod and the operator's hostfile ConfigMap (labelled
     * app=NAME, owned by the v1 MPIJob), so the new launcher does not read the old job's hostfile.
     */
    @Test
    void aSubmitRightAfterADeleteWaitsForTheTrainingOperatorsObjectsToGo() throws Exception {
        assertEquals(0, CliRun.run(cluster, SubmitAndFollowTest.withDetach(submit("mpijob-v1"))).code());
        cluster.startMpiJob("train");
        var mpi = cluster.client.genericKubernetesResources("kubeflow.org/v1", "MPIJob").withName("train").get();
        cluster.client.configMaps().resource(new io.fabric8.kubernetes.api.model.ConfigMapBuilder().withNewMetadata()
                .withName("train-config").withNamespace(FakeCluster.NS).withLabels(Map.of("app", "train"))
                .withOwnerReferences(Manifests.ownedBy(mpi)).endMetadata()
                .withData(Map.of("hostfile", "train-worker-0 slots=2\ntrain-worker-1 slots=2\n")).build()).create();
        assertEquals(0, CliRun.run(cluster, "delete", "train").code());
        cluster.client.pods().withLabel("training.kubeflow.org/job-name", "train").delete();
        try (KubernetesJobs k8s = cluster.jobs()) {
            k8s.leftoverWait = java.time.Duration.ofMillis(300);
            KubernetesJobException e = org.junit.jupiter.api.Assertions.assertThrows(KubernetesJobException.class,
                    () -> k8s.submit(KoloJobSpec.builder("train").image("registry.example.com/train:1.0")
                            .mode(KoloJobSpec.Mode.MPIJOB_V1).command(List.of("true")).build()));
            assertEquals("cannot submit job train: an earlier job train is still being deleted (ConfigMap train-config"
                    + " after 0 s); wait, or see kubectl get jobs,services,configmaps,secrets -l app=train (the MPIJob"
                    + " operator's)", e.getMessage());
        }
        cluster.collectGarbage();
        CliRun again = CliRun.run(cluster, SubmitAndFollowTest.withDetach(submit("mpijob-v1")));
        assertEquals(0, again.code(), again.toString());
    }
}
