package io.kolo.k8s;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * A submit right after {@code kolo k8s delete} of an MPIJob of the same name waits for the MPI Operator's leftovers
 * too: its launcher Job, Service, ConfigMap and Secret carry no Kolo label (the test makes them as the operator does).
 * Before, the submit went ahead as soon as the Kolo-labelled pods were gone, and the new job met the old one's
 * Service and hostfile.
 */
@Timeout(60)
class MpiJobResubmitTest {
    final FakeCluster cluster = new FakeCluster();

    @AfterEach
    void close() {
        cluster.close();
    }

    private static String[] submitMpiJob() {
        List<String> a = new ArrayList<>(List.of(SubmitAndFollowTest.withDetach(SubmitAndFollowTest.SUBMIT)));
        a.addAll(1 + a.indexOf("train"), List.of("--mode", "mpijob"));
        return a.toArray(String[]::new);
    }

    /** The old MPIJob deleted; its pods gone too; the operator's own objects not yet. */
    private void deletedWithOperatorObjectsLeft() throws Exception {
        assertEquals(0, CliRun.run(cluster, submitMpiJob()).code());
        cluster.startMpiJob("train");
        cluster.mpiOperatorObjects("train");
        assertEquals(0, CliRun.run(cluster, "delete", "train").code());
        cluster.client.pods().withLabel("training.kubeflow.org/job-name", "train").delete();
    }

    @Test
    void aSubmitRightAfterADeleteWaitsForTheMpiOperatorsObjectsToGo() throws Exception {
        deletedWithOperatorObjectsLeft();
        CliRun again = CliRun.start(cluster, submitMpiJob());
        Thread.sleep(1500);
        assertEquals("", again.err(), "still waiting for the garbage collector");
        assertEquals(List.of(), cluster.client.genericKubernetesResources("kubeflow.org/v2beta1", "MPIJob").list()
                .getItems(), "no new MPIJob yet");
        cluster.collectGarbage();
        assertEquals(0, again.code(), again.toString());
        assertFalse(cluster.client.genericKubernetesResources("kubeflow.org/v2beta1", "MPIJob").list().getItems()
                .isEmpty());
    }

    @Test
    void aSubmitWhileTheMpiOperatorsObjectsLingerSaysSoInOneLine() throws Exception {
        deletedWithOperatorObjectsLeft();
        try (KubernetesJobs k8s = cluster.jobs()) {
            k8s.leftoverWait = Duration.ofMillis(300);
            KubernetesJobException e = assertThrows(KubernetesJobException.class, () -> k8s.submit(
                    KoloJobSpec.builder("train").image("registry.example.com/train:1.0").mode(KoloJobSpec.Mode.MPIJOB)
                            .command(List.of("true")).build()));
            assertEquals("cannot submit job train: an earlier job train is still being deleted (Job train-launcher"
                    + " and 3 more objects after 0 s); wait, or see kubectl get jobs,services,configmaps,secrets"
                    + " -l app=train (the MPIJob operator's)", e.getMessage());
        }
    }
}
