package io.kolo.k8s;

import io.fabric8.kubernetes.api.model.GenericKubernetesResourceBuilder;
import io.fabric8.kubernetes.api.model.batch.v1.JobBuilder;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * A Job or MPIJob of the job's name that kolo k8s did not make (another team's, one written by hand) is never taken
 * for Kolo's: status, logs and delete refuse it in one line, and a submit of that name says the name is taken. Before,
 * an MPIJob was matched by its name alone, and {@code kolo k8s delete} deleted someone else's MPIJob.
 */
@Timeout(60)
class NotKolosJobTest {
    final FakeCluster cluster = new FakeCluster();

    @AfterEach
    void close() {
        cluster.close();
    }

    @ParameterizedTest
    @ValueSource(strings = {"MPIJob", "Job"})
    void statusLogsDeleteAndSubmitLeaveAJobKoloDidNotCreateAlone(String kind) throws Exception {
        if (kind.equals("MPIJob")) {
            cluster.client.genericKubernetesResources("kubeflow.org/v2beta1", "MPIJob").resource(
                    new GenericKubernetesResourceBuilder().withApiVersion("kubeflow.org/v2beta1").withKind("MPIJob")
                            .withNewMetadata().withName("train").withLabels(Map.of("app", "train")).endMetadata()
                            .withAdditionalProperties(Map.of("spec", Map.of("slotsPerWorker", 1))).build()).create();
        } else {
            cluster.client.batch().v1().jobs().resource(new JobBuilder().withNewMetadata().withName("train")
                    .withLabels(Map.of("app", "train")).endMetadata().withNewSpec().withNewTemplate().withNewSpec()
                    .addNewContainer().withName("c").withImage("busybox").endContainer().withRestartPolicy("Never")
                    .endSpec().endTemplate().endSpec().build()).create();
        }
        String notKolos = "kolo k8s: the " + kind + " train in namespace test was not created by kolo k8s (it has no"
                + " label kolo.io/job=train): kolo k8s leaves it alone; use kubectl for it\n";
        for (List<String> command : List.of(List.of("status", "train"), List.of("logs", "train"),
                List.of("delete", "train"))) {
            CliRun run = CliRun.run(cluster, command.toArray(String[]::new));
            assertEquals(1, run.code(), command + ": " + run);
            assertEquals(notKolos, run.err(), command.toString());
        }
        for (String mode : List.of("operator-free", "mpijob")) {
            List<String> submit = new java.util.ArrayList<>(List.of(SubmitAndFollowTest.withDetach(
                    SubmitAndFollowTest.SUBMIT)));
            submit.addAll(1 + submit.indexOf("train"), List.of("--mode", mode));
            CliRun run = CliRun.run(cluster, submit.toArray(String[]::new));
            assertEquals(1, run.code(), mode + ": " + run);
            assertEquals("kolo k8s: cannot submit job train: a " + kind + " named train that kolo k8s did not create"
                    + " already exists in namespace test: choose another job name, or delete that " + kind
                    + " with kubectl\n", run.err(), mode);
        }
        assertEquals(List.of(kind + "/train"), cluster.everything().stream()
                .map(o -> o.getKind() + "/" + o.getMetadata().getName()).toList(), "nothing deleted, nothing made");
    }
}
