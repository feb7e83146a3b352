package io.kolo.k8s;

import io.fabric8.kubernetes.api.model.PodList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Ctrl-C while following is in the middle of a request to the API server, then "y" to delete: the request's
 * interruption stayed on the thread, and the delete's own first request failed at once ("cannot read job train:
 * Operation: [list] for kind: [Pod] ... failed.; job train was not deleted"). The test holds one pod list back in
 * the mock server, so that the Ctrl-C lands inside it every time.
 */
@Timeout(60)
class CtrlCDuringARequestTest {
    final FakeCluster cluster = new FakeCluster();

    @AfterEach
    void close() {
        cluster.close();
    }

    @Test
    void ctrlCDuringARequestStillDeletesOnYes() throws Exception {
        CliRun run = CliRun.startWithInput(cluster, "y\n", SubmitAndFollowTest.SUBMIT);
        cluster.startIndexedJob("train");
        run.awaitErr("pod train-1");
        PodList pods = cluster.client.pods().withLabel(Manifests.JOB_LABEL, "train").list();
        CountDownLatch held = new CountDownLatch(1);
        cluster.server.expect().get().delay(5, TimeUnit.SECONDS)
                .withPath("/api/v1/namespaces/test/pods?labelSelector=kolo.io%2Fjob%3Dtrain")
                .andReply(200, request -> {
                    held.countDown();
                    return pods;
                }).once();
        // Following polls every 100 ms: its next pod list reaches the server and is held there for 5 s.
        assertTrue(held.await(10, TimeUnit.SECONDS), "following never asked for the pods again");
        Thread.sleep(200);
        run.interrupt();
        assertEquals(130, run.code(), run.toString());
        assertTrue(run.err().contains("kolo k8s: deleted job train"), run.err());
        assertEquals(null, cluster.client.batch().v1().jobs().withName("train").get());
    }
}
