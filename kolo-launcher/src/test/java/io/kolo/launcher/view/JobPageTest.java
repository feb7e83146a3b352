package io.kolo.launcher.view;

import com.fasterxml.jackson.databind.json.JsonMapper;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.kolo.view.ReportFile;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.openqa.selenium.WebElement;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The job view's page in a real browser, on given {@code /api/job} JSON: served live by a small HTTP server here (as
 * the launcher serves it), and frozen into a report file. What a job really reports is {@code JobViewBrowserTest}'s.
 */
@Timeout(120)
class JobPageTest {
    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final String TOKEN = "t0k3n";

    private final AtomicReference<String> job = new AtomicReference<>();
    private final AtomicInteger pageLoads = new AtomicInteger();
    private final List<String> apiQueries = new CopyOnWriteArrayList<>();
    private HttpServer server;

    @TempDir
    Path dir;

    @BeforeEach
    void serve() throws IOException {
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.createContext("/", exchange -> {
            String path = exchange.getRequestURI().getPath();
            if (path.equals("/")) {
                pageLoads.incrementAndGet();
                reply(exchange, 200, "text/html; charset=utf-8", resource("io/kolo/view/page.html"));
            } else if (path.startsWith("/assets/") && resource("io/kolo/view" + path) != null) {
                reply(exchange, 200, path.endsWith(".css") ? "text/css" : "text/javascript",
                        resource("io/kolo/view" + path));
            } else if (path.equals("/api/job")) {
                String query = String.valueOf(exchange.getRequestURI().getQuery());
                apiQueries.add(query);
                reply(exchange, 200, "application/json", since(job.get(), query).getBytes(StandardCharsets.UTF_8));
            } else {
                reply(exchange, 404, "text/plain", "not found".getBytes(StandardCharsets.UTF_8));
            }
        });
        server.start();
    }

    @AfterEach
    void stop() {
        server.stop(0);
    }

    private String url() {
        return "http://127.0.0.1:" + server.getAddress().getPort() + "/?token=" + TOKEN;
    }

    @Test
    void threeRanksWithOneStragglerShowThreeRowsTheSlowOneMarkedAndChartsThatGrowWithoutAReload() throws Exception {
        job.set(job("RUNNING", 10, false));
        try (Browser browser = Browser.start()) {
            browser.open(url());
            browser.await("three rows of ranks", d -> browser.all("#ranks tbody tr[data-rank]").size() == 3);
            browser.script("window.notReloaded = true;");

            List<WebElement> stragglers = browser.all("#ranks tr.straggler");
            assertEquals(1, stragglers.size());
            assertEquals("2", stragglers.get(0).getAttribute("data-rank"));
            WebElement label = browser.one("#ranks tr[data-rank='2'] .straggler-label");
            assertTrue(label.isDisplayed());
            assertEquals("straggler", label.getText());
            assertEquals("RUNNING", browser.one("#job-state").getText());
            assertEquals("3", browser.one("#job-size").getText());

            // Each rank's loss line is drawn in its colour; the throughput chart is there too.
            browser.await("a loss chart", d -> !browser.all("figure.chart[data-metric='loss'] canvas").isEmpty());
            assertEquals("30", browser.one("figure.chart[data-metric='loss']").getAttribute("data-points"));
            String canvas = "figure.chart[data-metric='loss'] canvas";
            for (String colour : List.of("#0969da", "#cf222e", "#1a7f37")) {
                assertTrue(browser.pixelsOfColour(canvas, colour) > 20, "rank line " + colour + " is drawn");
            }
            assertFalse(browser.all("figure.chart[data-metric='kolo_ops_per_second'] canvas").isEmpty());

            // The job goes on: more points and a rank killed. The same page shows them.
            job.set(job("RUNNING", 25, true));
            browser.await("the chart grew", d -> "75".equals(
                    browser.one("figure.chart[data-metric='loss']").getAttribute("data-points")));
            browser.await("rank 1 failed", d -> "FAILED".equals(
                    browser.one("#ranks tr[data-rank='1']").getAttribute("data-state")));
            assertEquals("137", browser.one("#ranks tr[data-rank='1'] [data-field='exitCode']").getText());
            assertEquals("killed by signal 9 (SIGKILL)",
                    browser.one("#ranks tr[data-rank='1'] [data-field='cause']").getText());
            assertTrue(browser.one("#failures li[data-rank='1']").getText().contains("exit code 137"));
            assertTrue(browser.one("#stalls tbody tr").getText().contains("grad.25"));

            assertEquals(Boolean.TRUE, browser.script("return window.notReloaded === true;"), "no reload");
            assertEquals(1, pageLoads.get(), "the page was loaded once");
            assertTrue(apiQueries.size() >= 2);
            assertTrue(apiQueries.stream().allMatch(q -> q.startsWith("token=" + TOKEN)),
                    "every poll carries the page's token: " + apiQueries);
            assertEquals("token=" + TOKEN, apiQueries.getFirst(), "the first poll asks for every point");
            assertTrue(apiQueries.stream().skip(1).allMatch(q -> q.matches("token=" + TOKEN + "&since=\\d+")),
                    "the next polls ask only for newer points: " + apiQueries);
        }
    }

    @Test
    void theReportOpensOfflineAndShowsTheFrozenJob() throws Exception {
        Path report = dir.resolve("job.html");
        ReportFile.write(report, job("FAILED", 25, true));
        try (Browser browser = Browser.start()) {
            browser.offline();
            browser.open(report.toUri().toString());
            browser.await("three rows of ranks", d -> browser.all("#ranks tbody tr[data-rank]").size() == 3);
            assertEquals("FAILED", browser.one("#job-state").getText());
            assertEquals("FAILED", browser.one("#ranks tr[data-rank='1']").getAttribute("data-state"));
            assertEquals("75", browser.one("figure.chart[data-metric='loss']").getAttribute("data-points"));
            assertTrue(browser.pixelsOfColour("figure.chart[data-metric='loss'] canvas", "#1a7f37") > 20);
            assertTrue(browser.one("#connection").getText().contains("does not update"));
            Thread.sleep(2500);
            assertEquals(List.of(), browser.resourcesLoaded(), "the report loads nothing and does not poll");
        }
    }

    @Test
    void whatTheJobSaysIsShownAsTextNeverRunAsHtml() throws Exception {
        String attack = "<img src=x onerror=\"window.attacked=true\"><script>window.attacked=true</script>";
        Map<String, Object> j = JSON.readValue(job("FAILED", 3, true), LinkedHashMap.class);
        @SuppressWarnings("unchecked")
        Map<String, Object> rank1 = ((List<Map<String, Object>>) j.get("ranks")).get(1);
        rank1.put("cause", attack);
        rank1.put("output", List.of(attack));
        job.set(JSON.writeValueAsString(j));
        try (Browser browser = Browser.start()) {
            browser.open(url());
            browser.await("rank 1 failed", d -> !browser.all("#ranks tr[data-rank='1'][data-state='FAILED']").isEmpty());
            assertEquals(attack, browser.one("#ranks tr[data-rank='1'] [data-field='cause']").getText());
            assertEquals(attack, browser.one(".rank-output[data-rank='1'] pre").getText());
            assertEquals(Boolean.FALSE, browser.script("return window.attacked === true;"));
        }
    }

    @Test
    void whenTheLauncherIsGoneThePageSaysSoAndKeepsTheLastView() throws Exception {
        job.set(job("RUNNING", 5, false));
        try (Browser browser = Browser.start()) {
            browser.open(url());
            browser.await("three rows of ranks", d -> browser.all("#ranks tbody tr[data-rank]").size() == 3);
            server.stop(0);
            browser.await("the page says it lost the job",
                    d -> browser.one("#connection").getText().startsWith("Cannot reach the job"));
            assertEquals(3, browser.all("#ranks tbody tr[data-rank]").size());
        }
    }

    /**
     * A job of three ranks after {@code steps} steps, rank 2 the straggler; with {@code killed}, rank 1 killed
     * and an op stalled waiting for it.
     */
    static String job(String state, int steps, boolean killed) throws IOException {
        long start = 1_796_000_000_000L;
        List<Map<String, Object>> ranks = new ArrayList<>();
        List<Map<String, Object>> metrics = new ArrayList<>();
        List<Map<String, Object>> events = new ArrayList<>();
        for (int r = 0; r < 3; r++) {
            boolean dead = killed && r == 1;
            Map<String, Object> rank = new LinkedHashMap<>();
            rank.put("rank", r);
            rank.put("host", "localhost");
            rank.put("pid", 4000 + r);
            rank.put("state", dead ? "FAILED" : "RUNNING");
            rank.put("ops", steps * 4L);
            rank.put("collectiveSeconds", r == 2 ? 0.1 * steps : 0.4 * steps);
            rank.put("betweenSeconds", r == 2 ? 0.5 * steps : 0.2 * steps);
            rank.put("bytes", steps * 4_000_000L);
            rank.put("lastOp", "grad." + steps);
            rank.put("lastOpAgoSeconds", 0.05);
            rank.put("latenessSeconds", r == 2 ? 0.3 * steps : 0.0);
            rank.put("lastCount", r == 2 ? steps * 4L : 0);
            rank.put("straggler", r == 2);
            rank.put("resets", 0);
            rank.put("exitCode", dead ? 137 : null);
            rank.put("cause", dead ? "killed by signal 9 (SIGKILL)" : null);
            rank.put("output", List.of("rank " + r + " step " + (steps - 1) + " loss " + (1.0 / steps)));
            ranks.add(rank);
            events.add(Map.of("timeMillis", start + r, "kind", "start", "rank", r,
                    "message", "rank " + r + " started on localhost (launcher's process " + (4000 + r) + ")"));
        }
        // In the order a view keeps them, step by step: a later job's points extend an earlier one's.
        for (int s = 0; s < steps; s++) {
            for (int r = 0; r < 3; r++) {
                metrics.add(Map.of("name", "loss", "rank", r, "value", 2.0 / (s + 1) + 0.1 * r, "step", s,
                        "timeMillis", start + 1000L * s));
                metrics.add(Map.of("name", "kolo_ops_per_second", "rank", r, "value", r == 2 ? 4.0 : 8.0,
                        "step", -1, "timeMillis", start + 1000L * s));
            }
        }
        List<Map<String, Object>> stalls = new ArrayList<>();
        if (killed) {
            stalls.add(Map.of("op", "grad." + steps, "missingRanks", List.of(1), "seconds", 31.0));
            events.add(Map.of("timeMillis", start + 1000L * steps, "kind", "failure", "rank", 1,
                    "message", "rank 1 exited with code 137: killed by signal 9 (SIGKILL)"));
        }
        Map<String, Object> job = new LinkedHashMap<>();
        job.put("state", state);
        job.put("size", 3);
        job.put("hosts", List.of("localhost"));
        job.put("generation", 0);
        job.put("elastic", false);
        job.put("startedAtMillis", start);
        job.put("elapsedSeconds", (double) steps);
        job.put("command", "kolo run -np 3 -- java Train");
        job.put("progressPercentage", 100.0 * steps / 50);
        job.put("estimatedRemainingSeconds", (double) (50 - steps));
        job.put("ranks", ranks);
        job.put("metricsCursor", metrics.size());
        job.put("metricsSince", null);
        job.put("metrics", metrics);
        job.put("stalls", stalls);
        job.put("events", events);
        return JSON.writeValueAsString(job);
    }

    /**
     * What {@code /api/job} answers {@code query}: with {@code since=N}, only the points after the N-th (the fixture's
     * points are numbered in order, from 1), as the launcher's view answers it.
     */
    @SuppressWarnings("unchecked")
    private static String since(String job, String query) throws IOException {
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("(?:^|&)since=(\\d+)").matcher(query);
        if (!m.find()) {
            return job;
        }
        int since = Integer.parseInt(m.group(1));
        Map<String, Object> j = JSON.readValue(job, LinkedHashMap.class);
        List<Object> metrics = (List<Object>) j.get("metrics");
        if (since > metrics.size()) {
            return job;
        }
        j.put("metricsSince", since);
        j.put("metrics", new ArrayList<>(metrics.subList(since, metrics.size())));
        return JSON.writeValueAsString(j);
    }

    private static byte[] resource(String name) throws IOException {
        try (InputStream in = JobPageTest.class.getClassLoader().getResourceAsStream(name)) {
            return in == null ? null : in.readAllBytes();
        }
    }

    private static void reply(HttpExchange exchange, int code, String type, byte[] body) throws IOException {
        exchange.getResponseHeaders().set("Content-Type", type);
        exchange.sendResponseHeaders(code, body.length);
        try (var out = exchange.getResponseBody()) {
            out.write(body);
        }
    }
}
