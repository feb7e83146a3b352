package io.kolo.k8s;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Bad input gets one line and exit code 2; a missing or unreachable cluster one line and exit code 1. */
@Timeout(30)
class BadInputTest {

    static CliRun submit(String... extra) throws Exception {
        List<String> args = new java.util.ArrayList<>(List.of("submit"));
        args.addAll(List.of(extra));
        args.addAll(List.of("--dry-run", "--", "true"));
        return CliRun.run(null, args.toArray(String[]::new));
    }

    @Test
    void eachBadValueIsOneLineNamingIt() throws Exception {
        String[][] cases = {
                {"--workers must be at least 1, got 0", "t", "--image", "i", "--workers", "0"},
                {"--slots must be at least 1, got 0", "t", "--image", "i", "--workers", "1", "--slots", "0"},
                {"job name 'Train_1' is not a DNS label", "Train_1", "--image", "i", "--workers", "1"},
                // A DNS label may start with a digit, a Service name may not: the job's Service is named after it.
                {"job name '1train' must start with a letter", "1train", "--image", "i", "--workers", "1"},
                {"job name '1train' must start with a letter", "1train", "--image", "i", "--workers", "1", "--mode",
                        "mpijob"},
                {"--cpu 0 must be more than 0", "t", "--image", "i", "--workers", "1", "--cpu", "0"},
                {"--memory lots is not a Kubernetes quantity", "t", "--image", "i", "--workers", "1", "--memory", "lots"},
                // Kubernetes refuses a limit below the request; an MPIJob takes it and its pods never appear.
                {"--limit-cpu 4 is less than --cpu 8", "t", "--image", "i", "--workers", "1", "--cpu", "8",
                        "--limit-cpu", "4"},
                {"--limit-memory 1Gi is less than --memory 2000Mi", "t", "--image", "i", "--workers", "1", "--memory",
                        "2000Mi", "--limit-memory", "1Gi", "--mode", "mpijob"},
                // The API server takes these; the kubelet then reports InvalidImageName and the pods never start.
                {"--image 'registry.example.com/Train:1.0' is not an image reference", "t", "--image",
                        "registry.example.com/Train:1.0", "--workers", "1"},
                {"--image 'train 1.0' is not an image reference", "t", "--image", "train 1.0", "--workers", "1"},
                {"--image 'train:1.0:' is not an image reference", "t", "--image", "train:1.0:", "--workers", "1"},
                // 'm' is milli: half a byte, which Kubernetes takes with a warning and no container runs in.
                {"--memory 512m is 0.512 bytes ('m' is milli): write 512Mi or 512M", "t", "--image", "i", "--workers",
                        "1", "--memory", "512m"},
                {"--memory 2000m is 2 bytes ('m' is milli): write 2000Mi or 2000M", "t", "--image", "i", "--workers",
                        "1", "--memory", "2000m"},
                {"--limit-memory 1.5 is 1.5 bytes", "t", "--image", "i", "--workers", "1", "--limit-memory", "1.5"},
                {"--mode slurm: use operator-free", "t", "--image", "i", "--workers", "1", "--mode", "slurm"},
                {"--image is required", "t", "--workers", "1"},
                {"--env X: expected NAME=VALUE", "t", "--image", "i", "--workers", "1", "--env", "X"},
                // Read by every rank as any worker reads it: a bad value would fail every pod, after they started.
                {"--env KOLO_TIMEOUT_SECONDS='soon' is invalid", "t", "--image", "i", "--workers", "1", "--env",
                        "KOLO_TIMEOUT_SECONDS=soon"},
                {"--env KOLO_TRANSPORT='bogus' is invalid", "t", "--image", "i", "--workers", "1", "--env",
                        "KOLO_TRANSPORT=bogus"},
                {"Missing required option: '--workers=W'", "t", "--image", "i"},
                // Kubernetes takes namespaces of at most 63 characters; a longer one was sent to the API server.
                {"namespace '" + "n".repeat(64) + "' is not a DNS label: use at most 63 lower case letters, digits"
                        + " and '-', starting and ending with a letter or digit (e.g. team-a)", "t", "--image", "i",
                        "--workers", "1", "-n", "n".repeat(64)},
                {"namespace 'Team_A' is not a DNS label: use at most 63", "t", "--image", "i", "--workers", "1",
                        "--namespace", "Team_A"},
        };
        for (String[] c : cases) {
            CliRun r = submit(List.of(c).subList(1, c.length).toArray(String[]::new));
            assertEquals(2, r.code(), r.toString());
            assertEquals(1, r.err().lines().count(), r.err());
            assertTrue(r.err().startsWith("kolo k8s: ") && r.err().contains(c[0]), r.err());
        }
    }

    @Test
    void helpAndUsageErrorsNameTheCommandAsTyped() throws Exception {
        for (String sub : List.of("status", "logs", "delete", "list")) {
            CliRun help = CliRun.run(null, sub, "--help");
            assertEquals(0, help.code(), help.toString());
            assertTrue(help.out().startsWith("Usage: kolo k8s " + sub + " "), help.out());
        }
        CliRun top = CliRun.run(null, "--help");
        assertTrue(top.out().startsWith("Usage: kolo k8s [-h] [COMMAND]"), top.out());
        CliRun missing = CliRun.run(null, "logs");
        assertEquals(2, missing.code(), missing.toString());
        assertEquals("kolo k8s: Missing required parameter: 'NAME' (see 'kolo k8s logs --help')",
                missing.err().strip());
        CliRun unknown = CliRun.run(null, "--bogus");
        assertEquals("kolo k8s: Unknown option: '--bogus' (see 'kolo k8s --help')", unknown.err().strip());
    }

    /** Checked before any cluster is asked (there is none here): a bad one went to the API server as a path. */
    @Test
    void theOtherCommandsRefuseABadNamespaceInOneLine() throws Exception {
        for (List<String> command : List.of(List.of("status", "t"), List.of("logs", "t"), List.of("delete", "t"),
                List.of("list"))) {
            List<String> args = new java.util.ArrayList<>(command);
            args.addAll(List.of("-n", "team_a"));
            CliRun r = CliRun.run(null, args.toArray(String[]::new));
            assertEquals(2, r.code(), r.toString());
            assertEquals("kolo k8s: namespace 'team_a' is not a DNS label: use at most 63 lower case letters, digits"
                    + " and '-', starting and ending with a letter or digit (e.g. team-a)\n", r.err());
        }
    }

    @Test
    void noKubeconfigSaysWhereItLooked(@TempDir Path home) {
        KubernetesJobException e = assertThrows(KubernetesJobException.class,
                () -> Kubeconfig.locate(Map.of("KUBECONFIG", home + "/nope"), home));
        assertEquals("no Kubernetes configuration found: looked at KUBECONFIG=" + home + "/nope (no readable file), "
                + home.resolve(".kube/config") + " (absent), the in-cluster service account (not in a pod); point"
                + " KUBECONFIG at your cluster's kubeconfig (kubectl must work with it)", e.getMessage());
    }

    @Test
    void anUnreachableApiServerFailsAtOnceInOneLine(@TempDir Path dir) throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        Path kubeconfig = dir.resolve("config");
        Files.writeString(kubeconfig, """
                apiVersion: v1
                kind: Config
                clusters:
                - cluster: {server: "https://127.0.0.1:%d"}
                  name: c
                contexts:
                - context: {cluster: c, user: u, namespace: ns1}
                  name: x
                current-context: x
                users:
                - name: u
                  user: {token: abc}
                """.formatted(port));
        var client = new io.fabric8.kubernetes.client.KubernetesClientBuilder()
                .withConfig(Kubeconfig.config(Map.of("KUBECONFIG", kubeconfig.toString()), dir)).build();
        try (KubernetesJobs k8s = KubernetesJobs.using(client)) {
            KubernetesJobException e = assertThrows(KubernetesJobException.class, () -> k8s.get("train", null));
            assertEquals("cannot reach the Kubernetes API server at https://127.0.0.1:" + port + "/ to find job train:"
                    + " ConnectException; is the cluster up, and is this the right kubeconfig context?", e.getMessage());
            assertFalse(e.getMessage().contains("\n"));
        } finally {
            client.close();
        }
    }
}
