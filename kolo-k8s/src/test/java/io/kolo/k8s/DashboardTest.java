package io.kolo.k8s;

import com.fasterxml.jackson.databind.JsonNode;
import com.networknt.schema.JsonSchema;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.client.utils.Serialization;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code kolo k8s submit --dashboard PORT}: the kolo run that holds the job's store (node 0's, or the MPIJob's
 * launcher) serves the job's page on PORT of all its pod's addresses, the port is on the pod's container, and kolo k8s
 * prints the {@code kubectl port-forward} line that reaches it. The objects are checked as {@link SchemaTest} checks
 * them; the lines on the mock cluster.
 */
@Timeout(60)
class DashboardTest {
    private static final String LINE = "kubectl port-forward pod/%s 8080:8080 -n test, then open http://localhost:8080/"
            + " with the token of the URL kolo run prints in its log (kolo k8s logs train)";

    private static List<String> strings(JsonNode array) {
        List<String> l = new ArrayList<>();
        array.forEach(e -> l.add(e.asText()));
        return l;
    }

    /** The options kolo run gets for the page, right before the program. */
    private static void servesThePage(JsonNode container) {
        List<String> cmd = strings(container.path("command"));
        int at = cmd.indexOf("--dashboard");
        assertTrue(at > 1, cmd.toString());
        assertEquals(List.of("--dashboard", "8080", "--dashboard-bind", "0.0.0.0", "-cp"), cmd.subList(at, at + 5));
    }

    @Test
    void theOperatorFreeJobServesThePageOnAllAddressesAndStillReadsIntoTheTypedModel() throws Exception {
        List<JsonNode> docs = SchemaTest.dryRun("--dashboard", "8080");
        JsonNode job = docs.get(2);
        JsonNode c = job.at("/spec/template/spec/containers/0");
        servesThePage(c);
        assertEquals("rendezvous", c.at("/ports/0/name").asText());
        assertEquals("dashboard", c.at("/ports/1/name").asText());
        assertEquals(8080, c.at("/ports/1/containerPort").asInt());
        assertEquals("8080", job.at("/metadata/annotations/kolo.io~1dashboard-port").asText());
        Job typed = Serialization.unmarshal(job.toString(), Job.class);
        List<String> unknown = new ArrayList<>();
        SchemaTest.leftOver(typed, "Job", unknown, new IdentityHashMap<>());
        assertEquals(List.of(), unknown);
        assertEquals(job, SchemaTest.YAML.readTree(Serialization.asJson(typed)));
    }

    @Test
    void bothMpiJobsServeItFromTheLauncherAndStayValidAgainstTheirCrds() throws Exception {
        for (Map.Entry<String, Path> mode : Map.of("mpijob", SchemaTest.CRD, "mpijob-v1", SchemaTest.V1_CRD)
                .entrySet()) {
            JsonSchema schema = SchemaTest.mpiJobSchema(mode.getValue());
            JsonNode mpi = SchemaTest.dryRun("--mode", mode.getKey(), "--dashboard", "8080").getFirst();
            assertEquals(Set.of(), schema.validate(mpi), mode.getKey());
            JsonNode launcher = mpi.at("/spec/mpiReplicaSpecs/Launcher/template/spec/containers/0");
            servesThePage(launcher);
            assertEquals("dashboard", launcher.at("/ports/0/name").asText());
            assertEquals(8080, launcher.at("/ports/0/containerPort").asInt());
            JsonNode worker = mpi.at("/spec/mpiReplicaSpecs/Worker/template/spec/containers/0");
            assertTrue(worker.path("ports").isMissingNode(), worker.toString());
            assertTrue(!strings(worker.path("command")).contains("--dashboard"), worker.toString());
        }
    }

    @Test
    void submitPrintsThePortForwardLineForPod0OnceItExistsAndStatusToo() throws Exception {
        try (FakeCluster cluster = new FakeCluster()) {
            CliRun run = CliRun.start(cluster, MpiJobV1Test.submit("operator-free", "--dashboard", "8080"));
            run.awaitErr("kolo k8s: submitted job train");
            cluster.startIndexedJob("train");
            run.awaitErr("kolo k8s: dashboard: " + LINE.formatted("train-0") + "\n");
            cluster.running("train-0");
            cluster.running("train-1");
            run.awaitErr("pod train-1 (ranks 2-3): Running");
            cluster.terminated("train-0", 0, "Completed", "2026-01-01T00:10:00Z");
            cluster.terminated("train-1", 0, "Completed", "2026-01-01T00:10:00Z");
            cluster.jobCondition("train", "Complete", "Completed", "all indexes succeeded");
            assertEquals(0, run.code(), run.toString());
            assertEquals(1, run.err().lines().filter(l -> l.contains("port-forward")).count(), run.err());
            CliRun status = CliRun.run(cluster, "status", "train");
            assertTrue(status.out().endsWith("  dashboard: " + LINE.formatted("train-0") + "\n"), status.out());
        }
    }

    @Test
    void aDetachedV1MpiJobSaysWhereThePageWillBeAndStatusNamesTheLauncherOnceItExists() throws Exception {
        try (FakeCluster cluster = FakeCluster.withTrainingOperator()) {
            CliRun run = CliRun.run(cluster, SubmitAndFollowTest.withDetach(MpiJobV1Test.submit("mpijob-v1",
                    "--dashboard", "8080")));
            assertEquals(0, run.code(), run.toString());
            assertTrue(run.err().endsWith("kolo k8s: the dashboard will be on port 8080 of the launcher pod; kolo k8s"
                    + " status train prints the kubectl port-forward line once that pod exists\n"), run.err());
            CliRun before = CliRun.run(cluster, "status", "train");
            assertTrue(before.out().endsWith("  dashboard: port 8080 of the launcher pod, which does not exist yet\n"),
                    before.out());
            cluster.startMpiJob("train");
            CliRun after = CliRun.run(cluster, "status", "train");
            assertTrue(after.out().endsWith("  dashboard: " + LINE.formatted("train-launcher") + "\n"), after.out());
        }
    }

    @Test
    void aJobWithoutDashboardPrintsNoDashboardLine() throws Exception {
        try (FakeCluster cluster = new FakeCluster()) {
            assertEquals(0, CliRun.run(cluster, SubmitAndFollowTest.withDetach(SubmitAndFollowTest.SUBMIT)).code());
            cluster.startIndexedJob("train");
            CliRun status = CliRun.run(cluster, "status", "train");
            assertTrue(!status.out().contains("dashboard"), status.out());
            assertTrue(!SchemaTest.dryRun().toString().contains("dashboard"));
        }
    }

    @Test
    void aBadPortIsOneLineBeforeAnythingIsCreated() throws Exception {
        try (FakeCluster cluster = new FakeCluster()) {
            Map<String, String> bad = Map.of(
                    "0", "--dashboard 0: use a port from 1 to 65535 (kubectl port-forward reaches it on the pod; 0,"
                            + " a free port, would be unknown to it)",
                    "70000", "--dashboard 70000: use a port from 1 to 65535 (kubectl port-forward reaches it on the"
                            + " pod; 0, a free port, would be unknown to it)",
                    "29500", "--dashboard 29500: pod 0 serves the job's rendezvous on that port; choose another (e.g."
                            + " 8080)");
            for (Map.Entry<String, String> b : bad.entrySet()) {
                CliRun r = CliRun.run(cluster, MpiJobV1Test.submit("operator-free", "--dashboard", b.getKey()));
                assertEquals(2, r.code(), r.toString());
                assertEquals("kolo k8s: " + b.getValue() + "\n", r.err());
            }
            CliRun word = CliRun.run(cluster, MpiJobV1Test.submit("operator-free", "--dashboard", "web"));
            assertEquals(2, word.code(), word.toString());
            assertEquals(1, word.err().lines().count(), word.err());
            assertTrue(word.err().contains("--dashboard"), word.err());
            assertEquals(List.of(), cluster.everything(), "nothing created");
        }
    }
}
