package io.kolo.k8s;

import io.fabric8.kubernetes.client.KubernetesClient;

/**
 * Reads a pod's log with one request, as {@code kubectl logs} does. The client's own {@code getLog()} first waits for
 * the pod to be ready or ended through an informer (a list and a watch of the pod), even with no time to wait: two
 * more requests for each log read, a failure logged where the user may not watch pods, and, against fabric8's mock
 * server, a closed watch that could hold the server's event loop for up to a minute.
 */
final class PodLogs {
    private PodLogs() {
    }

    /**
     * The pod's log (its only container's), its last {@code tailLines} lines when not null, of the container's
     * previous run when {@code previous}.
     *
     * @throws io.fabric8.kubernetes.client.KubernetesClientException when the API server refuses (no such pod, no
     *                                                                  previous run, not allowed)
     */
    static String read(KubernetesClient client, String namespace, String pod, Integer tailLines, boolean previous) {
        StringBuilder path = new StringBuilder("/api/v1/namespaces/").append(namespace).append("/pods/").append(pod)
                .append("/log?pretty=false");
        if (previous) {
            path.append("&previous=true");
        }
        if (tailLines != null) {
            path.append("&tailLines=").append(tailLines);
        }
        return client.raw(path.toString());
    }
}
