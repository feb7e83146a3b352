package io.kolo.k8s;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Finds the cluster as kubectl does: the files in {@code KUBECONFIG}, else {@code ~/.kube/config}, else the pod's
 * service account when running in a cluster. Requests fail within seconds when the API server cannot be reached,
 * instead of fabric8's default of retrying for many seconds.
 */
final class Kubeconfig {
    static final String IN_CLUSTER_TOKEN = "/var/run/secrets/kubernetes.io/serviceaccount/token";
    private static final int CONNECT_TIMEOUT_MS = 5_000;
    private static final int REQUEST_TIMEOUT_MS = 15_000;

    private Kubeconfig() {
    }

    /** Where the configuration comes from; {@link KubernetesJobException} naming every place looked at when none. */
    static String locate(Map<String, String> env, Path home) {
        List<String> looked = new ArrayList<>();
        String kubeconfig = env.get("KUBECONFIG");
        if (kubeconfig != null && !kubeconfig.isBlank()) {
            for (String f : kubeconfig.split(File.pathSeparator)) {
                if (!f.isBlank() && Files.isReadable(Path.of(f))) {
                    return f;
                }
            }
            looked.add("KUBECONFIG=" + kubeconfig + " (no readable file)");
        } else {
            looked.add("KUBECONFIG (not set)");
        }
        Path dflt = home.resolve(".kube").resolve("config");
        if (Files.isReadable(dflt)) {
            return dflt.toString();
        }
        looked.add(dflt + " (absent)");
        if (env.containsKey("KUBERNETES_SERVICE_HOST") && Files.isReadable(Path.of(IN_CLUSTER_TOKEN))) {
            return "in-cluster service account";
        }
        looked.add("the in-cluster service account (not in a pod)");
        throw new KubernetesJobException("no Kubernetes configuration found: looked at " + String.join(", ", looked)
                + "; point KUBECONFIG at your cluster's kubeconfig (kubectl must work with it)");
    }

    /** The client configuration, with short timeouts and no retries. */
    // Config.fromKubeconfig(context, contents, path) is marked for removal; its successor reads only the default file.
    @SuppressWarnings("removal")
    static Config config(Map<String, String> env, Path home) {
        String where = locate(env, home);
        Config base;
        try {
            base = where.equals("in-cluster service account") ? Config.autoConfigure(null)
                    : Config.fromKubeconfig(null, Files.readString(Path.of(where)), where);
        } catch (java.io.IOException | KubernetesClientException | IllegalArgumentException e) {
            throw new KubernetesJobException("cannot read the Kubernetes configuration " + where + ": "
                    + e.getMessage());
        }
        return new ConfigBuilder(base).withConnectionTimeout(CONNECT_TIMEOUT_MS).withRequestTimeout(REQUEST_TIMEOUT_MS)
                .withRequestRetryBackoffLimit(0).build();
    }
}
