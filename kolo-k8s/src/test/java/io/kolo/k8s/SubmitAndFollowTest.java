package io.kolo.k8s;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** kolo k8s submit, follow, status, logs, delete against the mock API server, the test playing the cluster. */
@Timeout(60)
class SubmitAndFollowTest {
    final FakeCluster cluster = new FakeCluster();

    @AfterEach
    void close() {
        cluster.close();
    }

    static final String[] SUBMIT = {"submit", "train", "--image", "registry.example.com/train:1.0", "--workers", "2",
            "--slots", "2", "--cpu", "2", "--memory", "4Gi", "--", "-cp", "/app/app.jar", "com.example.Train"};

    @Test
    void anOperatorFreeJobIsSubmittedFollowedToItsEndWithTaggedOutputAndItsExitCode() throws Exception {
        CliRun run = CliRun.start(cluster, SUBMIT);
        List<String> pods = cluster.startIndexedJob("train");
        assertEquals(List.of("train-0", "train-1"), pods);

        Job job = cluster.client.batch().v1().jobs().withName("train").get();
        Secret secret = cluster.client.secrets().withName("train-secret").get();
        Service service = cluster.client.services().withName("train").get();
        for (HasMetadata owned : List.of(secret, service)) {
            assertEquals(job.getMetadata().getUid(), owned.getMetadata().getOwnerReferences().getFirst().getUid(),
                    owned.getKind() + " must be owned by the Job, so deleting the Job deletes it");
        }
        assertEquals(64, secret.getStringData().getOrDefault("secret", new String(java.util.Base64.getDecoder()
                .decode(secret.getData() == null ? "" : secret.getData().getOrDefault("secret", "")))).length());

        cluster.schedule("train-0", "node-a");
        cluster.schedule("train-1", "node-b");
        run.awaitErr("pod train-1 (ranks 2-3): Pending on node-b");
        cluster.log("train-0", "[0]<stdout>:epoch 1 loss 0.5\n[1]<stdout>:epoch 1 loss 0.5\n");
        cluster.log("train-1", "[2]<stdout>:epoch 1 loss 0.5\n[3]<stderr>:a warning\n");
        cluster.running("train-0");
        cluster.running("train-1");
        run.awaitErr("pod train-0 (ranks 0-1): Running on node-a");
        cluster.terminated("train-0", 0, "Completed", "2026-01-01T00:10:00Z");
        cluster.terminated("train-1", 0, "Completed", "2026-01-01T00:10:00Z");
        cluster.jobCondition("train", "Complete", "Completed", "all indexes succeeded");

        assertEquals(0, run.code(), run.toString());
        assertEquals(List.of("[0]<stdout>:epoch 1 loss 0.5", "[1]<stdout>:epoch 1 loss 0.5",
                "[2]<stdout>:epoch 1 loss 0.5", "[3]<stderr>:a warning"), run.out().lines().sorted().toList());
        assertTrue(run.err().contains("kolo k8s: submitted job train (operator-free, 2 x 2 ranks) in namespace test"),
                run.err());
        assertTrue(run.err().contains("kolo k8s: job train succeeded"), run.err());

        CliRun status = CliRun.run(cluster, "status", "train");
        assertEquals(0, status.code(), status.toString());
        assertEquals("""
                job train (operator-free): succeeded, exit code 0
                  train-0 (ranks 0-1): Succeeded on node-a, exit code 0
                  train-1 (ranks 2-3): Succeeded on node-b, exit code 0
                """, status.out());
        List<String> followed = cluster.requestPaths();
        assertTrue(followed.contains("/api/v1/namespaces/test/pods/train-1/log?pretty=false&follow=true"),
                followed.toString());
        assertTrue(followed.stream().noneMatch(p -> p.contains("fieldSelector=metadata.name") || p.contains("watch=")),
                "following a log is one streamed GET, no list and watch of the pod: " + followed);
        CliRun rank3 = CliRun.run(cluster, "logs", "train", "--rank", "3");
        assertEquals("[3]<stderr>:a warning\n", rank3.out(), rank3.toString());
        List<String> paths = cluster.requestPaths();
        assertTrue(paths.contains("/api/v1/namespaces/test/pods/train-1/log?pretty=false"), paths.toString());
        // fabric8's getLog() waits for the pod with an informer: a list by the pod's name, then a watch.
        assertTrue(paths.stream().noneMatch(p -> p.contains("fieldSelector=metadata.name") || p.contains("watch=")),
                "one GET per log, no watch: " + paths);
        CliRun list = CliRun.run(cluster, "list");
        assertEquals("train\toperator-free\t2x2\tsucceeded\texit 0\n", list.out(), list.toString());
    }

    /** Kubernetes retries an image pull without end: following stops after the start timeout and says why. */
    @Test
    void aJobWhosePodsCannotPullTheirImageIsFollowedOnlyUntilTheStartTimeout() throws Exception {
        CliRun run = submitWithStartTimeoutOfOneSecond("registry.example.com/trian:1.0");
        cluster.startIndexedJob("train");
        for (String pod : List.of("train-0", "train-1")) {
            cluster.waiting(pod, "ImagePullBackOff", "Back-off pulling image \"registry.example.com/trian:1.0\"");
        }
        assertEquals(1, run.code(), run.toString());
        assertTrue(run.err().contains("kolo k8s: why: pod train-0 cannot pull image"), run.err());
        List<String> lines = run.err().lines().toList();
        assertEquals(stoppedFollowing("ImagePullBackOff"), lines.getLast(), run.err());
        assertNotEquals(null, cluster.client.batch().v1().jobs().withName("train").get());
    }

    /** {@code kolo k8s submit train} of two workers of {@code image}, {@code options} added, --start-timeout 1. */
    private CliRun submitWithStartTimeoutOfOneSecond(String image, String... options) {
        List<String> args = new java.util.ArrayList<>(List.of("submit", "train", "--image", image, "--workers", "2"));
        args.addAll(List.of(options));
        args.addAll(List.of("--start-timeout", "1", "--", "-cp", "/app/app.jar", "com.example.Train"));
        return CliRun.start(cluster, args.toArray(String[]::new));
    }

    /** kolo k8s's last line when train-0 has waited out the start timeout of 1 s for {@code reason}. */
    private static String stoppedFollowing(String reason) {
        return "kolo k8s: stopped following job train: pod train-0 has not started for 1 s (--start-timeout; " + reason
                + "), and Kubernetes keeps retrying; the job is left as it is: kolo k8s delete train, then submit it"
                + " again";
    }

    /** Nothing fits the request: the scheduler retries without end too, so following stops the same way. */
    @Test
    void aJobWhosePodsCannotBeScheduledIsFollowedOnlyUntilTheStartTimeout() throws Exception {
        CliRun run = submitWithStartTimeoutOfOneSecond("registry.example.com/train:1.0", "--cpu", "64");
        cluster.startIndexedJob("train");
        for (String pod : List.of("train-0", "train-1")) {
            cluster.unschedulable(pod, "0/3 nodes are available: 3 Insufficient cpu.");
        }
        assertEquals(1, run.code(), run.toString());
        assertTrue(run.err().contains("kolo k8s: why: pod train-0 cannot be scheduled"), run.err());
        assertEquals(stoppedFollowing("Unschedulable"), run.err().lines().toList().getLast(), run.err());
    }

    /** The namespace's quota forbids the pods: the Job controller says so on the Job and retries without end. */
    @Test
    void aJobThatGetsNoPodSaysWhyAndIsFollowedOnlyUntilTheStartTimeout() throws Exception {
        CliRun run = submitWithStartTimeoutOfOneSecond("registry.example.com/train:1.0", "--cpu", "2");
        run.awaitErr("kolo k8s: submitted job train");
        String quota = "Error creating: pods \"train-0-x7k2p\" is forbidden: exceeded quota: compute, requested:"
                + " limits.cpu=2, used: limits.cpu=0, limited: limits.cpu=1";
        cluster.jobEvent("Job", "train", "FailedCreate", quota);
        assertEquals(1, run.code(), run.toString());
        assertTrue(run.err().contains("kolo k8s: why: job train: FailedCreate: " + quota + "\n"), run.err());
        assertEquals("kolo k8s: stopped following job train: none of its pods has appeared in 1 s (--start-timeout),"
                + " and Kubernetes keeps retrying; the job is left as it is: kolo k8s delete train, then submit it"
                + " again", run.err().lines().toList().getLast(), run.err());
        CliRun status = CliRun.run(cluster, "status", "train");
        assertTrue(status.out().contains("  why: job train: FailedCreate: " + quota + "\n"), status.out());
    }

    /**
     * Deleting a job deletes its pods, Secret and Service in the background: a submit of the same name right after
     * waits for them, rather than failing on the old Secret or meeting the old pods.
     */
    @Test
    void aSubmitRightAfterADeleteOfTheSameNameWaitsForTheOldJobsObjectsToGo() throws Exception {
        assertEquals(0, CliRun.run(cluster, withDetach(SUBMIT)).code());
        cluster.startIndexedJob("train");
        assertEquals(0, CliRun.run(cluster, "delete", "train").code());
        CliRun again = CliRun.start(cluster, withDetach(SUBMIT));
        Thread.sleep(1500);
        assertEquals("", again.err(), "still waiting for the garbage collector");
        // The garbage collector, played object by object: the new job's objects must not be taken for old ones.
        cluster.client.pods().withLabel(Manifests.JOB_LABEL, "train").delete();
        cluster.client.services().withName("train").delete();
        cluster.client.secrets().withName("train-secret").delete();
        assertEquals(0, again.code(), again.toString());
        Job job = cluster.client.batch().v1().jobs().withName("train").get();
        assertEquals(job.getMetadata().getUid(), cluster.client.secrets().withName("train-secret").get()
                .getMetadata().getOwnerReferences().getFirst().getUid());
    }

    @Test
    void aSubmitWhileTheOldJobsPodsLingerSaysSoInOneLine() throws Exception {
        assertEquals(0, CliRun.run(cluster, withDetach(SUBMIT)).code());
        cluster.startIndexedJob("train");
        cluster.client.batch().v1().jobs().withName("train").delete();
        try (KubernetesJobs k8s = cluster.jobs()) {
            k8s.leftoverWait = java.time.Duration.ofMillis(300);
            KubernetesJobException e = org.junit.jupiter.api.Assertions.assertThrows(KubernetesJobException.class,
                    () -> k8s.submit(KoloJobSpec.builder("train").image("registry.example.com/train:1.0")
                            .command(List.of("true")).build()));
            assertEquals("cannot submit job train: an earlier job train is still being deleted (pod train-0 and 3"
                    + " more objects after 0 s); wait, or see kubectl get pods,services,secrets -l kolo.io/job=train",
                    e.getMessage());
        }
    }

    /** Deleted from another terminal (or by --ttl-after-finished) while followed: following ends, saying so. */
    @Test
    void aJobDeletedWhileFollowedEndsFollowingInOneLine() throws Exception {
        CliRun run = CliRun.start(cluster, SUBMIT);
        cluster.startIndexedJob("train");
        cluster.running("train-0");
        run.awaitErr("pod train-0 (ranks 0-1): Running");
        assertEquals(0, CliRun.run(cluster, "delete", "train").code());
        cluster.collectGarbage();
        assertEquals(1, run.code(), run.toString());
        assertEquals("kolo k8s: job train no longer exists in namespace test: it was deleted (kolo k8s delete, kubectl,"
                + " or --ttl-after-finished) before its end was seen", run.err().lines().toList().getLast(), run.err());
    }

    /** Another application's Service already has the name: nothing of the job is left behind to block a retry. */
    @Test
    void aNameTakenByAnotherServiceFailsInOneLineAndLeavesNothingBehind() throws Exception {
        cluster.client.services().resource(new io.fabric8.kubernetes.api.model.ServiceBuilder().withNewMetadata()
                .withName("train").endMetadata().withNewSpec().addNewPort().withPort(80).endPort().endSpec().build())
                .create();
        CliRun run = CliRun.run(cluster, withDetach(SUBMIT));
        assertEquals(1, run.code(), run.toString());
        assertEquals("kolo k8s: cannot submit job train: a Service named train already exists in namespace test (not"
                + " made by kolo k8s for this job): choose another job name, or delete that Service\n", run.err());
        cluster.collectGarbage();
        assertEquals(List.of("Service/train"), cluster.everything().stream()
                .map(o -> o.getKind() + "/" + o.getMetadata().getName()).toList());
        CliRun again = CliRun.run(cluster, "status", "train");
        assertEquals("kolo k8s: no Kolo job named train in namespace test (kolo k8s list shows them)\n", again.err());
    }

    @Test
    void deleteRemovesTheJobAndThroughOwnerReferencesEverythingMadeForIt() throws Exception {
        CliRun submit = CliRun.run(cluster, withDetach(SUBMIT));
        assertEquals(0, submit.code(), submit.toString());
        cluster.startIndexedJob("train");
        cluster.running("train-0");
        assertEquals(5, cluster.everything().size(), "Job, 2 pods, Service, Secret");
        CliRun delete = CliRun.run(cluster, "delete", "train");
        assertEquals(0, delete.code(), delete.toString());
        cluster.collectGarbage();
        assertEquals(List.of(), cluster.everything().stream().map(o -> o.getKind() + "/" + o.getMetadata().getName())
                .toList());
        CliRun gone = CliRun.run(cluster, "status", "train");
        assertEquals(1, gone.code());
        assertEquals("kolo k8s: no Kolo job named train in namespace test (kolo k8s list shows them)\n", gone.err());
    }

    @Test
    void ctrlCAsksWhetherToDeleteAndDeletesOnYes() throws Exception {
        CliRun run = CliRun.startWithInput(cluster, "y\n", SUBMIT);
        cluster.startIndexedJob("train");
        run.awaitErr("pod train-0");
        run.interrupt();
        assertEquals(130, run.code(), run.toString());
        assertTrue(run.err().contains("kolo k8s: delete job train? [y/N] "), run.err());
        assertTrue(run.err().contains("kolo k8s: deleted job train"), run.err());
        assertEquals(null, cluster.client.batch().v1().jobs().withName("train").get());
    }

    /** The real thing: kolo k8s as a process, SIGINT as Ctrl-C sends it, the answer typed on its stdin. */
    @Test
    void ctrlCToTheProcessAsksAndDeletes(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(
                new ProcessBuilder("env", "--default-signal=INT", "true").start().waitFor() == 0,
                "needs env --default-signal (GNU coreutils 8.31 or later) to give kolo k8s a SIGINT it does not ignore");
        java.nio.file.Path kubeconfig = dir.resolve("config");
        java.nio.file.Files.writeString(kubeconfig, """
                apiVersion: v1
                kind: Config
                clusters:
                - cluster: {server: "%s"}
                  name: mock
                contexts:
                - context: {cluster: mock, user: u, namespace: test}
                  name: mock
                current-context: mock
                users:
                - name: u
                  user: {token: t}
                """.formatted(cluster.client.getMasterUrl()));
        // A process started in the background by a non-interactive shell (as CI scripts do) ignores SIGINT, and its
        // children inherit that: the JVM then installs no handler and Ctrl-C would do nothing. env resets it.
        List<String> cmd = new java.util.ArrayList<>(List.of("env", "--default-signal=INT",
                java.nio.file.Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", System.getProperty("java.class.path"), K8sCli.class.getName()));
        cmd.addAll(List.of(SUBMIT));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        pb.environment().put("KUBECONFIG", kubeconfig.toString());
        Process p = pb.start();
        StringBuilder out = new StringBuilder();
        Thread reader = Thread.ofVirtual().start(() -> {
            try (var r = p.inputReader()) {
                r.lines().forEach(l -> {
                    synchronized (out) {
                        out.append(l).append('\n');
                    }
                });
            } catch (java.io.IOException ignored) {
                // The process ended.
            }
        });
        cluster.startIndexedJob("train");
        for (int i = 0; i < 300 && !out.toString().contains("pod train-1"); i++) {
            Thread.sleep(50);
        }
        assertTrue(out.toString().contains("pod train-1"), out.toString());
        new ProcessBuilder("kill", "-INT", Long.toString(p.pid())).start().waitFor();
        for (int i = 0; i < 300 && !out.toString().contains("[y/N]"); i++) {
            Thread.sleep(50);
        }
        p.getOutputStream().write("y\n".getBytes());
        p.getOutputStream().close();
        // A CI run once saw no prompt and no exit: if it comes back, the child's threads say where it waits.
        assertTrue(p.waitFor(30, java.util.concurrent.TimeUnit.SECONDS), () -> out + "\n" + threadDump(p));
        reader.join(java.time.Duration.ofSeconds(10));
        assertEquals(130, p.exitValue(), out.toString());
        assertTrue(out.toString().contains("kolo k8s: deleted job train"), out.toString());
        assertEquals(null, cluster.client.batch().v1().jobs().withName("train").get());
    }

    private static String threadDump(Process p) {
        try {
            Process jstack = new ProcessBuilder(java.nio.file.Path.of(System.getProperty("java.home"), "bin", "jstack")
                    .toString(), Long.toString(p.pid())).redirectErrorStream(true).start();
            String dump = new String(jstack.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
            jstack.waitFor(30, java.util.concurrent.TimeUnit.SECONDS);
            return dump;
        } catch (java.io.IOException | InterruptedException e) {
            return "(no thread dump: " + e + ")";
        } finally {
            p.destroyForcibly();
        }
    }

    @Test
    void ctrlCLeavesTheJobRunningOnNo() throws Exception {
        CliRun run = CliRun.startWithInput(cluster, "n\n", SUBMIT);
        cluster.startIndexedJob("train");
        run.awaitErr("pod train-0");
        run.interrupt();
        assertEquals(130, run.code(), run.toString());
        assertTrue(run.err().contains("kolo k8s: job train keeps running (kolo k8s logs train -f follows it again"),
                run.err());
        assertNotEquals(null, cluster.client.batch().v1().jobs().withName("train").get());
    }

    @Test
    void anMpiJobIsSubmittedAndFollowedThroughItsLaunchersLog() throws Exception {
        String[] args = SUBMIT.clone();
        List<String> a = new java.util.ArrayList<>(List.of(args));
        a.addAll(1 + a.indexOf("train"), List.of("--mode", "mpijob"));
        CliRun run = CliRun.start(cluster, a.toArray(String[]::new));
        for (int i = 0; i < 100 && cluster.client.genericKubernetesResources("kubeflow.org/v2beta1", "MPIJob")
                .withName("train").get() == null; i++) {
            Thread.sleep(50);
        }
        List<String> pods = cluster.startMpiJob("train");
        assertEquals(List.of("train-worker-0", "train-worker-1", "train-launcher"), pods);
        pods.forEach(cluster::running);
        cluster.log("train-launcher", "[0]<stdout>:hello\n[3]<stdout>:hello\n");
        cluster.mpiJobCondition("train", "Running", "MPIJobRunning");
        run.awaitErr("pod train-launcher (launcher): Running");
        cluster.terminated("train-launcher", 0, "Completed", "2026-01-01T00:10:00Z");
        cluster.mpiJobCondition("train", "Succeeded", "MPIJobSucceeded");
        assertEquals(0, run.code(), run.toString());
        assertEquals(List.of("[0]<stdout>:hello", "[3]<stdout>:hello"), run.out().lines().sorted().toList());
        assertFalse(run.err().contains("why:"), run.err());
    }

    static String[] withDetach(String[] args) {
        List<String> a = new java.util.ArrayList<>(List.of(args));
        a.add(a.indexOf("--"), "--detach");
        return a.toArray(String[]::new);
    }
}
