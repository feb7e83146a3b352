package io.kolo.k8s;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.OptionalInt;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** One line per cause of a job that does not run, from what the (played) cluster reports. */
@Timeout(60)
class ExplainTest {
    final FakeCluster cluster = new FakeCluster();
    KoloJob job;

    @BeforeEach
    void submit() throws Exception {
        job = cluster.jobs().submit(KoloJobSpec.builder("train").image("registry.example.com/train:1.0").workers(2)
                .slots(2).cpu("4").memory("4Gi").command(List.of("-cp", "/app/app.jar", "com.example.Train")).build());
        cluster.startIndexedJob("train");
    }

    @AfterEach
    void close() {
        cluster.close();
    }

    private String only() {
        List<String> problems = job.status().problems();
        assertEquals(1, problems.size(), problems.toString());
        return problems.getFirst();
    }

    @Test
    void unschedulableSaysWhichRequestToLowerAndHowManyNodesCouldFitOne() {
        for (String n : List.of("node-a", "node-b", "node-c")) {
            cluster.node(n, n.equals("node-a") ? "8" : "2", "32Gi");
        }
        cluster.unschedulable("train-1", "0/3 nodes are available: 3 Insufficient cpu.");
        assertEquals("pod train-1 cannot be scheduled: 0/3 nodes are available: 3 Insufficient cpu.; lower --cpu"
                + " (each worker asks for 4; 1 of 3 nodes have that much allocatable cpu) or use fewer --workers", only());
        assertEquals(JobStatus.Phase.PENDING, job.status().phase());
    }

    @Test
    void aSchedulingEventExplainsAPodWithoutConditions() {
        cluster.event("train-0", "FailedScheduling", "0/2 nodes are available: 2 Insufficient memory.");
        assertEquals("pod train-0 cannot be scheduled: 0/2 nodes are available: 2 Insufficient memory.; lower"
                + " --memory (each worker asks for 4Gi) or use fewer --workers", only());
    }

    @Test
    void imagePullErrors() {
        cluster.waiting("train-0", "ImagePullBackOff", "Back-off pulling image \"registry.example.com/train:1.0\"");
        assertEquals("pod train-0 cannot pull image registry.example.com/train:1.0 (ImagePullBackOff): Back-off"
                + " pulling image \"registry.example.com/train:1.0\"", only());
    }

    @Test
    void createContainerConfigError() {
        cluster.waiting("train-1", "CreateContainerConfigError", "secret \"train-secret\" not found");
        assertEquals("pod train-1 cannot start its container (CreateContainerConfigError): secret \"train-secret\""
                + " not found", only());
    }

    @Test
    void oomKilledNamesTheLimit() {
        cluster.schedule("train-1", "node-b");
        cluster.oomKilledBefore("train-1");
        assertEquals("pod train-1 (ranks 2-3, node node-b) was killed for using more memory than its limit 4Gi"
                + " (OOMKilled); raise --memory or --limit-memory", only());
    }

    @Test
    void aCrashLoopShowsTheLastLogLines() throws InterruptedException {
        cluster.log("train-0", "starting\nException in thread \"main\" java.lang.NoClassDefFoundError: com/example/Train\n");
        cluster.crashLoop("train-0", 4, 1);
        cluster.requestPaths();
        assertEquals("pod train-0 keeps crashing (CrashLoopBackOff, 4 restarts, last exit code 1); last log lines:"
                + " starting | Exception in thread \"main\" java.lang.NoClassDefFoundError: com/example/Train", only());
        // One GET of the log, as kubectl logs: no list and watch of the pod first (that needs the right to watch
        // pods, and closing the watch has held the mock server's event loop up to a minute).
        List<String> paths = cluster.requestPaths();
        assertTrue(paths.contains("/api/v1/namespaces/test/pods/train-0/log?pretty=false&previous=true&tailLines="
                + Explainer.logLines()), paths.toString());
        // fabric8's getLog() waits for the pod with an informer: a list by the pod's name, then a watch.
        assertTrue(paths.stream().noneMatch(p -> p.contains("fieldSelector=metadata.name") || p.contains("watch=")),
                paths.toString());
    }

    @Test
    void aFailedRankIsNamedWithPodNodeExitCodeAndTheLaunchersLine() {
        cluster.schedule("train-1", "node-b");
        cluster.log("train-1", "[2]<stdout>:step 5\n[3]<stderr>:java.lang.IllegalStateException: boom\n"
                + "kolo: rank 3 on node 1 (train-1) exited with code 3; terminating the other 1 rank\n");
        cluster.terminated("train-1", 3, "Error", "2026-01-01T00:05:00Z");
        cluster.jobCondition("train", "Failed", "BackoffLimitExceeded", "Job has reached the specified backoff limit");
        JobStatus s = job.status();
        assertEquals(JobStatus.Phase.FAILED, s.phase());
        assertEquals(OptionalInt.of(3), s.exitCode());
        assertEquals(List.of("pod train-1 (ranks 2-3, node node-b) exited with code 3: kolo: rank 3 on node 1"
                + " (train-1) exited with code 3; terminating the other 1 rank"), s.problems());
    }

    @Test
    void aRendezvousNameThatNeverResolved() {
        cluster.log("train-1", "kolo: the rendezvous host train-0.train did not resolve within 300 s (--start-timeout):"
                + " train-0.train: Name or service not known; it must name node 0 (on Kubernetes: pod 0 of the job,"
                + " through its headless Service)\n");
        cluster.terminated("train-1", 127, "Error", "2026-01-01T00:05:00Z");
        assertTrue(only().startsWith("pod train-1 (ranks 2-3) exited with code 127: kolo: the rendezvous host"
                + " train-0.train did not resolve within 300 s"), only());
    }

    @Test
    void theJobsDeadline() {
        cluster.jobCondition("train", "Failed", "DeadlineExceeded", "Job was active longer than specified deadline");
        assertEquals("the job ran past its deadline (activeDeadlineSeconds) and Kubernetes stopped it: Job was active"
                + " longer than specified deadline; raise --active-deadline if it needs longer", only());
        assertEquals(JobStatus.Phase.FAILED, job.status().phase());
    }

    @Test
    void failedPodsLogsAreKeptBeforeTheJobIsDeleted(@TempDir Path dir) throws Exception {
        cluster.log("train-1", "kolo: rank 2 on node 1 (train-1) exited with code 9\n");
        cluster.terminated("train-1", 9, "Error", "2026-01-01T00:05:00Z");
        CliRun delete = CliRun.run(cluster, "delete", "train", "--output-dir", dir.toString());
        assertEquals(0, delete.code(), delete.toString());
        assertEquals("kolo: rank 2 on node 1 (train-1) exited with code 9\n", Files.readString(dir.resolve("train-1.log")));
        assertEquals(List.of(dir.resolve("train-1.log")), Files.list(dir).toList());
        assertTrue(delete.err().contains("kolo k8s: kept the log of a failed pod in " + dir.resolve("train-1.log")),
                delete.err());
    }

    /** The logs cannot be kept where asked: one line, and the job stays, since its logs would go with it. */
    @Test
    void anOutputDirThatCannotBeWrittenLeavesTheJobAndSaysWhy(@TempDir Path dir) throws Exception {
        cluster.terminated("train-1", 9, "Error", "2026-01-01T00:05:00Z");
        Path notADir = Files.writeString(dir.resolve("logs"), "a file");
        CliRun delete = CliRun.run(cluster, "delete", "train", "--output-dir", notADir.toString());
        assertEquals(1, delete.code(), delete.toString());
        assertEquals("kolo k8s: cannot keep the log of failed pod train-1 in " + notADir.resolve("train-1.log")
                + " (FileAlreadyExistsException: " + notADir + "): choose another --output-dir; job train was not"
                + " deleted\n", delete.err());
        assertTrue(cluster.client.batch().v1().jobs().withName("train").get() != null);
    }
}
