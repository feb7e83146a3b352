package io.kolo.k8s;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** A cluster without the MPI Operator: mpijob mode says so, and the other commands work as on any cluster. */
@Timeout(60)
class NoMpiOperatorTest {
    final FakeCluster cluster = new FakeCluster(false);

    @AfterEach
    void close() {
        cluster.close();
    }

    @Test
    void anMpiJobIsRefusedInOneLineAndTheOtherCommandsStillWork() throws Exception {
        CliRun mpi = CliRun.run(cluster, "submit", "train", "--image", "registry.example.com/train:1.0", "--workers",
                "2", "--mode", "mpijob", "--detach", "--", "-cp", "/app/app.jar", "com.example.Train");
        assertEquals(1, mpi.code(), mpi.toString());
        assertEquals("kolo k8s: this cluster has no MPIJob kind (kubeflow.org/v2beta1): install the MPI Operator, or"
                + " use --mode operator-free\n", mpi.err());
        CliRun status = CliRun.run(cluster, "status", "train");
        assertEquals("kolo k8s: no Kolo job named train in namespace test (kolo k8s list shows them)\n", status.err());
        CliRun submit = CliRun.run(cluster, "submit", "train", "--image", "registry.example.com/train:1.0",
                "--workers", "2", "--detach", "--", "-cp", "/app/app.jar", "com.example.Train");
        assertEquals(0, submit.code(), submit.toString());
        CliRun list = CliRun.run(cluster, "list");
        assertEquals(0, list.code(), list.toString());
        assertEquals("train\toperator-free\t2x1\tpending\n", list.out(), list.toString());
        CliRun delete = CliRun.run(cluster, "delete", "train");
        assertEquals(0, delete.code(), delete.toString());
    }
}
