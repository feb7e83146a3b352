package io.kolo.launcher;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kolo.launcher.ViewClient.Response;
import io.kolo.launcher.ViewClient.Sample;
import io.kolo.launcher.workers.SlowRankTraining;
import io.kolo.launcher.workers.ViewWorker;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static io.kolo.launcher.ViewClient.get;
import static io.kolo.launcher.ViewClient.parseExposition;
import static io.kolo.launcher.ViewClient.reportJson;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code kolo run --dashboard/--report} with real ranks: the launcher's view over real HTTP while the job runs, and the
 * report it writes when the job ends.
 */
@Timeout(180)
class DashboardRunTest {
    private static final String CP = System.getProperty("java.class.path");
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Pattern URL = Pattern.compile("kolo: job view at (http://\\S+)");

    /** A launcher running in this JVM, its output readable while it runs. */
    record Launcher(CompletableFuture<Integer> exit, ByteArrayOutputStream out, ByteArrayOutputStream err) {
        static Launcher start(String... args) {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            ByteArrayOutputStream err = new ByteArrayOutputStream();
            PrintStream o = new PrintStream(out, true, StandardCharsets.UTF_8);
            PrintStream e = new PrintStream(err, true, StandardCharsets.UTF_8);
            return new Launcher(CompletableFuture.supplyAsync(() -> Main.run(args, o, e)), out, err);
        }

        /** The URL the launcher printed, waiting for it. */
        String url() throws InterruptedException {
            long deadline = System.nanoTime() + 60_000_000_000L;
            while (System.nanoTime() - deadline < 0) {
                Matcher m = URL.matcher(err.toString(StandardCharsets.UTF_8));
                if (m.find()) {
                    return m.group(1);
                }
                if (exit.isDone()) {
                    break;
                }
                Thread.sleep(50);
            }
            throw new AssertionError("no job view URL printed: " + err.toString(StandardCharsets.UTF_8));
        }

        int code() throws Exception {
            return exit.get(120, java.util.concurrent.TimeUnit.SECONDS);
        }
    }

    /** Polls {@code /api/job} until {@code until} holds; the last answer. */
    private static JsonNode awaitJob(Launcher launcher, String base, Predicate<JsonNode> until) throws Exception {
        long deadline = System.nanoTime() + 90_000_000_000L;
        JsonNode job = null;
        while (System.nanoTime() - deadline < 0 && !launcher.exit().isDone()) {
            job = JSON.readTree(get(base + "api/job").body());
            if (until.test(job)) {
                return job;
            }
            Thread.sleep(200);
        }
        throw new AssertionError("the job view never showed what was awaited; last: " + job + "\n"
                + launcher.err().toString(StandardCharsets.UTF_8));
    }

    private static String[] job(Path pids, long seconds, String... options) {
        List<String> args = new ArrayList<>(List.of("run", "-np", "3"));
        args.addAll(List.of(options));
        args.addAll(List.of("-cp", CP, ViewWorker.class.getName(), Long.toString(seconds), pids.toString()));
        return args.toArray(String[]::new);
    }

    @Test
    void theViewShowsThreeRanksRunningWithOpsThenTheReportShowsThemSucceeded(@TempDir Path dir) throws Exception {
        Path pids = Files.createDirectories(dir.resolve("pids"));
        Path report = dir.resolve("job.html");
        Launcher launcher = Launcher.start(job(pids, 8, "--dashboard", "0", "--report", report.toString()));
        String url = launcher.url();
        assertTrue(url.matches("http://127\\.0\\.0\\.1:\\d+/"), url);
        assertEquals(200, get(url).status());
        JsonNode running = awaitJob(launcher, url, job -> {
            if (job.get("ranks").size() != 3) {
                return false;
            }
            for (JsonNode r : job.get("ranks")) {
                if (!r.get("state").asText().equals("RUNNING") || r.get("ops").asLong() == 0) {
                    return false;
                }
            }
            return true;
        });
        assertEquals("RUNNING", running.get("state").asText());
        assertTrue(running.get("command").asText().startsWith("kolo run -np 3 --dashboard 0 --report "),
                running.get("command").asText());
        assertEquals(3, running.get("size").asInt());
        for (JsonNode r : running.get("ranks")) {
            assertTrue(r.get("pid").asLong() > 0, r.toString());
            assertTrue(r.get("exitCode").isNull());
        }
        List<Sample> metrics = parseExposition(get(url + "metrics").body());
        Set<String> opsRanks = new HashSet<>();
        for (Sample s : metrics) {
            if (s.name().equals("kolo_rank_ops_total") && s.value() > 0) {
                opsRanks.add(s.labels().get("rank"));
                assertFalse(s.labels().get("host").isEmpty(), s.toString());
            }
        }
        assertEquals(Set.of("0", "1", "2"), opsRanks, metrics.toString());
        assertTrue(metrics.contains(new Sample("kolo_job_state", Map.of("state", "RUNNING"), 1.0)));

        assertEquals(0, launcher.code(), launcher.err().toString(StandardCharsets.UTF_8));
        String err = launcher.err().toString(StandardCharsets.UTF_8);
        assertEquals(1, err.split("kolo: job view at ", -1).length - 1, err);
        assertTrue(err.contains("kolo: job report written to " + report), err);
        JsonNode end = reportJson(report);
        assertEquals("SUCCEEDED", end.get("state").asText());
        assertEquals(3, end.get("ranks").size());
        for (JsonNode r : end.get("ranks")) {
            assertEquals("EXITED", r.get("state").asText(), r.toString());
            assertEquals(0, r.get("exitCode").asInt());
            assertTrue(r.get("ops").asLong() > 0, r.toString());
            assertTrue(r.get("output").size() > 0, r.toString());
        }
    }

    /**
     * {@code kolo run -np 1 --dashboard 0}: the rank, which needs no store, showed no figures (no ops, no reported
     * points); it now publishes to the launcher's store as the ranks of a larger job do.
     */
    @Test
    void aOneRankJobsViewShowsItsRanksFigures(@TempDir Path dir) throws Exception {
        Path pids = Files.createDirectories(dir.resolve("pids"));
        Path report = dir.resolve("one.html");
        List<String> args = new ArrayList<>(List.of("run", "-np", "1", "--dashboard", "0", "--report",
                report.toString(), "-cp", CP, ViewWorker.class.getName(), "6", pids.toString()));
        Launcher launcher = Launcher.start(args.toArray(String[]::new));
        String url = launcher.url();
        JsonNode running = awaitJob(launcher, url, job -> job.get("ranks").size() == 1
                && job.get("ranks").get(0).get("ops").asLong() > 0);
        assertEquals(1, running.get("size").asInt());
        assertTrue(running.get("ranks").get(0).get("pid").asLong() > 0, running.toString());
        double ops = 0;
        for (Sample s : parseExposition(get(url + "metrics").body())) {
            if (s.name().equals("kolo_rank_ops_total") && s.labels().get("rank").equals("0")) {
                ops = s.value();
            }
        }
        assertTrue(ops > 0, "/metrics shows the rank's ops");
        assertEquals(0, launcher.code(), launcher.err().toString(StandardCharsets.UTF_8));
        JsonNode end = reportJson(report);
        assertEquals("SUCCEEDED", end.get("state").asText());
        assertTrue(end.get("ranks").get(0).get("ops").asLong() > 0, end.toString());
    }

    /**
     * A training loop whose gradient's named allreduce runs from the response cache from its second step on (so the
     * coordinator sees almost none of the ops), rank 2 computing 50 ms longer than the others each step: the view
     * marks rank 2, and only rank 2, from the ranks' time in collectives.
     */
    @Test
    void aSlowRankWhoseOpsRunFromTheResponseCacheIsMarked() throws Exception {
        Launcher launcher = Launcher.start("run", "-np", "3", "--dashboard", "0", "-cp", CP,
                SlowRankTraining.class.getName(), "400", "named");
        String url = launcher.url();
        // The rank whose JVM came up last may be marked for a moment at the start (the first op waited for it).
        JsonNode marked = awaitJob(launcher, url, job -> job.get("ranks").size() == 3
                && job.get("ranks").get(2).get("straggler").asBoolean()
                && !job.get("ranks").get(0).get("straggler").asBoolean()
                && !job.get("ranks").get(1).get("straggler").asBoolean());
        JsonNode ranks = marked.get("ranks");
        JsonNode slow = ranks.get(2);
        assertTrue(slow.get("lastCount").asLong() <= 3 && slow.get("ops").asLong() > 10,
                "the coordinator saw few of rank 2's ops: " + slow);
        assertTrue(slow.get("collectiveLatenessSeconds").asDouble() > slow.get("coordinatorLatenessSeconds").asDouble(),
                slow.toString());
        assertEquals(slow.get("collectiveLatenessSeconds").asDouble(), slow.get("latenessSeconds").asDouble(), 1e-9);
        boolean event = false;
        for (JsonNode e : marked.get("events")) {
            event |= e.get("kind").asText().equals("straggler") && e.get("rank").asInt() == 2;
        }
        assertTrue(event, marked.get("events").toString());
        assertEquals(0, launcher.code(), launcher.err().toString(StandardCharsets.UTF_8));
    }

    @Test
    void aKilledRankTurnsFailedWithItsExitCodeAndCause(@TempDir Path dir) throws Exception {
        Path pids = Files.createDirectories(dir.resolve("pids"));
        Path report = dir.resolve("failed.html");
        Launcher launcher = Launcher.start(job(pids, 60, "--dashboard", "0", "--report", report.toString()));
        String url = launcher.url();
        awaitJob(launcher, url, job -> job.get("ranks").size() == 3
                && job.get("ranks").get(1).get("ops").asLong() > 0);
        long pid = Long.parseLong(Files.readString(pids.resolve("rank.1")).strip());
        assertTrue(ProcessHandle.of(pid).orElseThrow().destroyForcibly());
        assertEquals(137, launcher.code(), launcher.err().toString(StandardCharsets.UTF_8));
        JsonNode end = reportJson(report);
        assertEquals("FAILED", end.get("state").asText());
        JsonNode killed = end.get("ranks").get(1);
        assertEquals("FAILED", killed.get("state").asText(), killed.toString());
        assertEquals(137, killed.get("exitCode").asInt());
        assertTrue(killed.get("cause").asText().contains("rank 1"), killed.toString());
        assertTrue(killed.get("cause").asText().contains("SIGKILL"), killed.toString());
        boolean failureEvent = false;
        for (JsonNode e : end.get("events")) {
            failureEvent |= e.get("kind").asText().equals("failure") && e.get("rank").asInt() == 1;
        }
        assertTrue(failureEvent, end.get("events").toString());
    }

    @Test
    void boundBeyondLoopbackTheViewNeedsTheTokenItPrinted(@TempDir Path dir) throws Exception {
        Path pids = Files.createDirectories(dir.resolve("pids"));
        Launcher launcher = Launcher.start(job(pids, 6, "--dashboard", "0", "--dashboard-bind", "0.0.0.0"));
        String url = launcher.url();
        Matcher m = Pattern.compile("http://[^:]+:(\\d+)/\\?token=([0-9a-f]+)").matcher(url);
        assertTrue(m.matches(), url);
        String base = "http://127.0.0.1:" + m.group(1) + "/";
        assertEquals(403, get(base + "api/job").status());
        assertEquals(403, get(base + "metrics").status());
        assertEquals(403, get(base).status());
        assertEquals(403, get(base + "api/job?token=0" + m.group(2).substring(1)).status());
        Response ok = get(base + "api/job?token=" + m.group(2));
        assertEquals(200, ok.status());
        assertFalse(ok.body().contains(m.group(2)), "the token is not part of the view");
        assertEquals(0, launcher.code(), launcher.err().toString(StandardCharsets.UTF_8));
    }

    @Test
    void badViewOptionsAreOneLineBeforeAnyRankStarts(@TempDir Path dir) throws Exception {
        Path pids = Files.createDirectories(dir.resolve("pids"));
        try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            int port = taken.getLocalPort();
            Map<String, String> cases = Map.of(
                    "--dashboard " + port, "kolo: --dashboard " + port + ": port " + port + " on 127.0.0.1 is in use",
                    "--dashboard 70000", "kolo: --dashboard 70000: give a TCP port from 1 to 65535",
                    "--report " + dir.resolve("no-such-dir/job.html"), "kolo: --report " + dir.resolve("no-such-dir")
                            .resolve("job.html") + ": no such directory",
                    "--report " + dir, "kolo: --report " + dir + " is a directory",
                    "--dashboard-bind 0.0.0.0", "kolo: --dashboard-bind 0.0.0.0 goes with --dashboard PORT");
            for (Map.Entry<String, String> c : cases.entrySet()) {
                LauncherProcessTest.Result r = LauncherProcessTest.kolo(job(pids, 1, c.getKey().split(" ")));
                assertEquals(2, r.code(), c.getKey() + ": " + r.err());
                assertTrue(r.err().startsWith(c.getValue()), c.getKey() + ": " + r.err());
                assertEquals(1, r.err().strip().lines().count(), c.getKey() + ": " + r.err());
                assertEquals("", r.out());
                try (var started = Files.list(pids)) {
                    assertEquals(0, started.count(), c.getKey() + ": a rank started");
                }
            }
        }
    }
}
