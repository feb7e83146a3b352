package io.kolo.k8s;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.http.HttpClient;
import io.fabric8.kubernetes.client.http.HttpResponse;

import java.io.IOException;
import java.io.InputStream;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Reads or follows a pod's log with one request, as {@code kubectl logs [-f]} does. The client's own {@code getLog()}
 * and {@code watchLog()} first wait for the pod to be ready or ended through an informer (a list and a watch of the
 * pod), even with no time to wait: two more requests for each log, a failure logged where the user may not watch
 * pods, and, against fabric8's mock server, a closed watch that could hold the server's event loop for up to a minute.
 */
final class PodLogs {
    private PodLogs() {
    }

    /**
     * The pod's log (its only container's), its last {@code tailLines} lines when not null, of the container's
     * previous run when {@code previous}; null when there is no such pod (404).
     *
     * @throws io.fabric8.kubernetes.client.KubernetesClientException when the API server refuses otherwise (no
     *                                                                  previous run, not allowed)
     */
    static String read(KubernetesClient client, String namespace, String pod, Integer tailLines, boolean previous) {
        StringBuilder path = path(namespace, pod);
        if (previous) {
            path.append("&previous=true");
        }
        if (tailLines != null) {
            path.append("&tailLines=").append(tailLines);
        }
        return client.raw(path.toString());
    }

    /**
     * The pod's log as it is written, until its container ends ({@code follow=true}); the caller closes the stream.
     * Waits for the server's answer as long as the client's request timeout (a minute when it has none).
     *
     * @throws IOException when the server refuses (its status code) or does not answer
     */
    static InputStream follow(KubernetesClient client, String namespace, String pod) throws IOException {
        HttpClient http = client.getHttpClient();
        // As the client's raw(): the API's path after the master URL, which may have a path of its own (a proxy).
        String master = client.getMasterUrl().toString().replaceAll("/+$", "");
        var request = http.newHttpRequestBuilder().uri(master + path(namespace, pod) + "&follow=true").build();
        // A client configured with no request timeout (0) still gets one for the answer's headers: a minute.
        int configured = client.getConfiguration().getRequestTimeout();
        long timeout = configured > 0 ? configured : 60_000;
        HttpResponse<InputStream> response;
        try {
            response = http.sendAsync(request, InputStream.class).get(timeout, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while asking for the log of pod " + pod, e);
        } catch (ExecutionException | TimeoutException e) {
            throw new IOException("cannot follow the log of pod " + pod + ": " + e, e);
        }
        if (!response.isSuccessful()) {
            if (response.body() != null) {
                response.body().close();
            }
            throw new IOException("cannot follow the log of pod " + pod + ": HTTP " + response.code());
        }
        return response.body();
    }

    private static StringBuilder path(String namespace, String pod) {
        return new StringBuilder("/api/v1/namespaces/").append(namespace).append("/pods/").append(pod)
                .append("/log?pretty=false");
    }
}
