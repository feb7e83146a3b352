package io.kolo.k8s;

import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A pod's log read, tailed and followed with one request each, against the mock API server. */
@Timeout(60)
class PodLogsTest {
    final FakeCluster cluster = new FakeCluster();

    @AfterEach
    void close() {
        cluster.close();
    }

    @Test
    void readTailedPreviousAndFollowedWithOneRequestEach() throws Exception {
        cluster.log("p", "one\ntwo\n");
        cluster.requestPaths();
        assertEquals("one\ntwo\n", PodLogs.read(cluster.client, FakeCluster.NS, "p", null, false));
        assertEquals("one\ntwo\n", PodLogs.read(cluster.client, FakeCluster.NS, "p", Explainer.logLines(), true));
        try (InputStream in = PodLogs.follow(cluster.client, FakeCluster.NS, "p")) {
            assertEquals("one\ntwo\n", new String(in.readAllBytes(), StandardCharsets.UTF_8));
        }
        String base = "/api/v1/namespaces/test/pods/p/log?pretty=false";
        assertEquals(java.util.List.of(base, base + "&previous=true&tailLines=" + Explainer.logLines(),
                base + "&follow=true"), cluster.requestPaths());
    }

    @Test
    void aClientWithoutRequestTimeoutStillFollows() throws Exception {
        cluster.log("p", "line\n");
        try (KubernetesClient untimed = new KubernetesClientBuilder().withConfig(new ConfigBuilder(
                cluster.client.getConfiguration()).withRequestTimeout(0).build()).build();
             InputStream in = PodLogs.follow(untimed, FakeCluster.NS, "p")) {
            assertEquals("line\n", new String(in.readAllBytes(), StandardCharsets.UTF_8));
        }
    }

    @Test
    void aPodThatIsGoneHasNoLogToReadAndOneToFollowIsAnErrorNamingIt() {
        // What the API server answers for a pod that is gone (the CRUD mode has no answer of its own for logs).
        String base = "/api/v1/namespaces/test/pods/gone/log?pretty=false";
        for (String query : java.util.List.of("", "&follow=true")) {
            cluster.server.expect().get().withPath(base + query).andReturn(404, "{\"kind\":\"Status\",\"apiVersion\":"
                    + "\"v1\",\"status\":\"Failure\",\"message\":\"pods \\\"gone\\\" not found\",\"reason\":\"NotFound\","
                    + "\"code\":404}").always();
        }
        IOException e = assertThrows(IOException.class, () -> PodLogs.follow(cluster.client, FakeCluster.NS, "gone"));
        assertTrue(e.getMessage().startsWith("cannot follow the log of pod gone: HTTP 404"), e.getMessage());
        assertNull(PodLogs.read(cluster.client, FakeCluster.NS, "gone", null, false));
    }
}
