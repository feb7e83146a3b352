package io.kolo.view;

import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.io.IOException;
import java.io.InputStream;
import java.net.HttpURLConnection;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The job view over real HTTP on loopback. */
@Timeout(60)
class DashboardServerTest {
    /** A response: its status, headers (names in lower case) and body. */
    record Response(int statusCode, Map<String, List<String>> headers, String body) {
        String header(String name) {
            List<String> values = headers.get(name);
            return values == null ? "" : values.getFirst();
        }
    }

    /** GET with a foreign Origin, as a page of another site would send. */
    static Response get(String url) throws IOException {
        HttpURLConnection c = (HttpURLConnection) URI.create(url).toURL().openConnection();
        c.setConnectTimeout(10_000);
        c.setReadTimeout(10_000);
        c.setRequestProperty("Origin", "http://evil.example");
        int status = c.getResponseCode();
        Map<String, List<String>> headers = new java.util.HashMap<>();
        c.getHeaderFields().forEach((k, v) -> {
            if (k != null) {
                headers.put(k.toLowerCase(java.util.Locale.ROOT), v);
            }
        });
        try (InputStream in = status < 400 ? c.getInputStream() : c.getErrorStream()) {
            return new Response(status, headers, in == null ? "" : new String(in.readAllBytes(), StandardCharsets.UTF_8));
        } finally {
            c.disconnect();
        }
    }

    private static JobView view() {
        JobView view = new JobView("kolo run -np 1 -- x", 1, false, Duration.ofSeconds(1));
        view.rankStarted(0, "localhost", 42);
        return view;
    }

    @Test
    void servesTheJobMetricsAndPageOnLoopbackWithoutCors() throws Exception {
        try (JobView view = view(); DashboardServer server = DashboardServer.start(view, null, 0)) {
            assertTrue(server.url().matches("http://127\\.0\\.0\\.1:\\d+/"), server.url());
            assertTrue(server.port() > 0);
            Response job = get(server.url() + "api/job");
            assertEquals(200, job.statusCode());
            assertTrue(job.header("content-type").startsWith("application/json"));
            assertEquals(42, new ObjectMapper().readTree(job.body()).get("ranks").get(0).get("pid").asLong());
            Response metrics = get(server.url() + "metrics");
            assertEquals(200, metrics.statusCode());
            assertTrue(metrics.header("content-type").startsWith("text/plain; version=0.0.4"));
            assertEquals(1.0, JobViewTest.samples(metrics.body()).get("kolo_rank_up{rank=\"0\",host=\"localhost\"}"));
            for (Response r : List.of(job, metrics)) {
                assertTrue(r.headers().keySet().stream().noneMatch(h -> h.startsWith("access-control")),
                        r.headers().toString());
            }
            Response page = get(server.url());
            assertEquals(200, page.statusCode());
            assertTrue(page.header("content-type").startsWith("text/html"));
            assertEquals(PageAssets.page(), page.body());
            Response script = get(server.url() + "assets/view.js");
            assertEquals(200, script.statusCode());
            assertTrue(script.header("content-type").startsWith("text/javascript"));
            assertEquals(404, get(server.url() + "assets/../../module-info.class").statusCode());
            assertEquals(404, get(server.url() + "nothing-here").statusCode());
        }
    }

    /** {@code /api/job?since=} gives the points after the cursor; a cursor that is not a number is one line. */
    @Test
    void sinceACursorTheApiSendsOnlyNewerPoints() throws Exception {
        try (JobView view = view(); DashboardServer server = DashboardServer.start(view, null, 0)) {
            view.accept(new RankSnapshot(0, 1, "localhost", 42, 0, System.currentTimeMillis(), 1, 0, 0, "", 0,
                    new long[0], new long[0], List.of(), 0, List.of(new RankSnapshot.Point(1, "loss", 1, 0, 1))));
            var all = new ObjectMapper().readTree(get(server.url() + "api/job").body());
            assertEquals(1, all.get("metrics").size());
            long cursor = all.get("metricsCursor").asLong();
            var none = new ObjectMapper().readTree(get(server.url() + "api/job?since=" + cursor).body());
            assertEquals(0, none.get("metrics").size());
            assertEquals(cursor, none.get("metricsSince").asLong());
            Response bad = get(server.url() + "api/job?since=x");
            assertEquals(400, bad.statusCode());
            assertTrue(bad.body().startsWith("since=x is not a number"), bad.body());
        }
    }

    /**
     * An open page (it read {@code /api/job} a moment ago) still gets the ended view after the job's holder closed the
     * server, and the server stops once it has: the page shows the end, not a lost connection.
     */
    @Test
    void anOpenPageGetsTheEndedViewAfterClose() throws Exception {
        JobView view = view();
        DashboardServer server = DashboardServer.start(view, null, 0);
        String api = server.url() + "api/job";
        assertEquals("RUNNING", new ObjectMapper().readTree(get(api).body()).get("state").asText());
        view.ended(JobView.SUCCEEDED);
        view.close();
        Thread closing = Thread.ofPlatform().start(server::close);
        // The page's next poll comes after the holder closed the server.
        Thread.sleep(300);
        Response last = get(api);
        assertEquals(200, last.statusCode());
        assertEquals("SUCCEEDED", new ObjectMapper().readTree(last.body()).get("state").asText());
        closing.join(Duration.ofSeconds(10));
        assertFalse(closing.isAlive(), "close() returns once the page has seen the end");
        assertThrows(IOException.class, () -> get(api), "no longer served");
    }

    @Test
    void boundBeyondLoopbackEveryRequestNeedsTheToken() throws Exception {
        try (JobView view = view(); DashboardServer server = DashboardServer.start(view, "0.0.0.0", 0)) {
            String token = server.url().substring(server.url().indexOf("?token=") + "?token=".length());
            assertTrue(token.matches("[0-9a-f]{48}"), server.url());
            String base = "http://127.0.0.1:" + server.port() + "/";
            for (String path : new String[]{"", "api/job", "metrics", "assets/x.js"}) {
                assertEquals(403, get(base + path).statusCode(), path);
                assertEquals(403, get(base + path + "?token=" + token.substring(1) + "0").statusCode(), path);
            }
            Response ok = get(base + "api/job?token=" + token);
            assertEquals(200, ok.statusCode());
            assertFalse(ok.body().contains(token));
        }
    }

    @Test
    void aPortInUseOrOutOfRangeIsOneLine() throws Exception {
        try (JobView view = view(); ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            IllegalArgumentException inUse = assertThrows(IllegalArgumentException.class,
                    () -> DashboardServer.start(view, "127.0.0.1", taken.getLocalPort()));
            assertTrue(inUse.getMessage().contains("port " + taken.getLocalPort() + " on 127.0.0.1 is in use"),
                    inUse.getMessage());
            assertFalse(inUse.getMessage().contains("\n"));
            IllegalArgumentException range = assertThrows(IllegalArgumentException.class,
                    () -> DashboardServer.start(view, null, 70000));
            assertTrue(range.getMessage().startsWith("port 70000 is out of range"), range.getMessage());
        }
    }
}
