package io.kolo.launcher;

import io.kolo.launcher.workers.ElasticCounter;
import io.kolo.launcher.workers.ElasticOutside;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Elastic jobs with real worker processes on this machine ({@link ElasticCounter}): a rank SIGKILLed mid-allreduce,
 * the reset limit, too few slots for longer than the elastic timeout, hosts added by the discovery script. Each
 * checks every worker's log: the committed step never goes back, sizes and ranks after each reset, nothing left.
 */
@Timeout(120)
class ElasticRunTest {
    private static final String CP = System.getProperty("java.class.path");

    static CompletableFuture<LauncherProcessTest.Result> start(Path dir, int steps, int millis,
                                                              String... flags) {
        return startWithStartTimeout(dir, 20, steps, millis, flags);
    }

    /** {@code kolo run FLAGS --start-timeout START_TIMEOUT ... ElasticCounter DIR STEPS MILLIS}, in the background. */
    static CompletableFuture<LauncherProcessTest.Result> startWithStartTimeout(Path dir, int startTimeout, int steps,
                                                                              int millis, String... flags) {
        List<String> args = new ArrayList<>(List.of("run"));
        args.addAll(List.of(flags));
        args.addAll(List.of("--start-timeout", Integer.toString(startTimeout), "-cp", CP, ElasticCounter.class.getName(),
                dir.toString(), Integer.toString(steps), Integer.toString(millis)));
        CompletableFuture<LauncherProcessTest.Result> job = new CompletableFuture<>();
        Thread.ofPlatform().daemon().start(() -> job.complete(LauncherProcessTest.kolo(args.toArray(String[]::new))));
        return job;
    }

    @Test
    void aRankKilledMidAllreduceIsStartedAgainOnItsHostAndTheCommittedStepNeverGoesBack(@TempDir Path dir)
            throws Exception {
        var job = start(dir, 60, 30, "-np", "3", "--min-np", "2", "-H", "localhost:3", "--reset-limit", "3");
        awaitCommit(job, dir, "w1", 10);
        kill(dir, "w1");
        LauncherProcessTest.Result r = finish(job, dir);
        assertEquals(0, r.code(), r.out() + r.err());
        assertTrue(r.err().lines().anyMatch(l -> l.startsWith("kolo: reset 1 of at most 3: rank 1 on host localhost"
                + " exited with code 137 (killed by SIGKILL")
                && l.endsWith("; job 1 has 3 ranks (localhost:3)")), r.err());
        // The survivors keep the lowest ranks in their order; the slot's new worker comes after them.
        List<String> done = finished(r);
        assertEquals(List.of("worker w0 done at 60 as rank 0 of 3", "worker w2 done at 60 as rank 1 of 3",
                "worker w3 done at 60 as rank 2 of 3"), done, r.err());
        assertCommitsNeverGoBack(dir);
        assertTrue(Files.readString(dir.resolve("log.w0")).contains("reset rank 0 size 3"));
        assertNothingLeft(dir);
    }

    /**
     * A worker whose own step throws leaves through the program's {@code finally { Kolo.shutdown(); }}, as
     * docs/elastic.md writes it: the others, whose allreduce its shutdown ends, take it for the lost rank it is and
     * reset without it, rather than all failing with "shut down".
     */
    @Test
    void aWorkerThatThrowsIsReplacedAndTheOthersGoOnFromTheirCommit(@TempDir Path dir) throws Exception {
        Files.writeString(dir.resolve("throw.w1"), "10");
        var job = start(dir, 40, 30, "-np", "3", "--min-np", "2", "-H", "localhost:3", "--reset-limit", "3");
        LauncherProcessTest.Result r = finish(job, dir);
        assertEquals(0, r.code(), r.out() + r.err());
        assertTrue(r.err().lines().anyMatch(l -> l.startsWith("kolo: reset 1 of at most 3: rank 1 on host localhost"
                + " failed: IllegalStateException: worker w1 throws at step 10 (exit code 1)")), r.err());
        assertEquals(List.of("worker w0 done at 40 as rank 0 of 3", "worker w2 done at 40 as rank 1 of 3",
                "worker w3 done at 40 as rank 2 of 3"), finished(r), r.err());
        assertCommitsNeverGoBack(dir);
        assertNothingLeft(dir);
    }

    /**
     * Each generation's rank 0 opened KOLO_TIMELINE afresh, so the job after a reset truncated the timeline of the one
     * that failed, and with it the failed op. A later generation now writes beside it (tl.gen1.json).
     */
    /** The elastic job's view: the failed worker, the reset that replaced it, the next generation's ranks. */
    @Test
    void theReportShowsTheFailureTheResetAndTheNextGeneration(@TempDir Path dir) throws Exception {
        Files.writeString(dir.resolve("throw.w1"), "10");
        Path report = dir.resolve("elastic.html");
        var job = start(dir, 40, 30, "-np", "3", "--min-np", "2", "-H", "localhost:3", "--reset-limit", "3",
                "--report", report.toString());
        LauncherProcessTest.Result r = finish(job, dir);
        assertEquals(0, r.code(), r.out() + r.err());
        com.fasterxml.jackson.databind.JsonNode view = ViewClient.reportJson(report);
        assertEquals("SUCCEEDED", view.get("state").asText());
        assertTrue(view.get("elastic").asBoolean());
        assertEquals(1, view.get("generation").asInt());
        assertEquals(3, view.get("size").asInt());
        List<String> events = new java.util.ArrayList<>();
        view.get("events").forEach(e -> events.add(e.get("kind").asText() + " " + e.get("message").asText()));
        assertTrue(events.stream().anyMatch(e -> e.startsWith("failure rank 1 on host localhost failed:"
                + " IllegalStateException: worker w1 throws at step 10")), events.toString());
        assertTrue(events.stream().anyMatch(e -> e.startsWith("reset reset 1: rank 1 on host localhost failed")
                && e.endsWith("job 1 has 3 ranks (localhost:3)")), events.toString());
        for (com.fasterxml.jackson.databind.JsonNode rank : view.get("ranks")) {
            assertEquals("EXITED", rank.get("state").asText(), rank.toString());
            assertTrue(rank.get("ops").asLong() > 0, rank.toString());
        }
        assertNothingLeft(dir);
    }

    @Test
    void aResetKeepsTheFailedGenerationsTimeline(@TempDir Path dir) throws Exception {
        Files.writeString(dir.resolve("throw.w1"), "10");
        Path timeline = dir.resolve("tl.json");
        var job = start(dir, 20, 30, "-np", "3", "--min-np", "2", "-H", "localhost:3", "--reset-limit", "3",
                "--timeline-filename", timeline.toString());
        LauncherProcessTest.Result r = finish(job, dir);
        assertEquals(0, r.code(), r.out() + r.err());
        String first = Files.readString(timeline);
        // The failed job's record is whole. The op it failed on is in it only when rank 0 had started that op before
        // rank 1's shutdown ended the job (else rank 0's next op was refused at once): not asserted.
        assertTrue(first.strip().endsWith("]") && first.contains("\"ALLREDUCE\""), first);
        String next = Files.readString(dir.resolve("tl.gen1.json"));
        assertTrue(next.contains("\"ALLREDUCE\"") && !next.contains("\"error\""), next);
        assertNothingLeft(dir);
    }

    /**
     * The replacement for a killed rank dies before it joins, so the launcher publishes another job: the survivors,
     * waiting in the job that can no longer form, go to the new one at once. Before, they waited there for the whole
     * start timeout (20 s here, 60 by default).
     */
    @Test
    void survivorsWaitingForAReplacementThatDiedGoToTheNextJobAtOnce(@TempDir Path dir) throws Exception {
        var job = start(dir, 60, 30, "-np", "3", "--min-np", "2", "-H", "localhost:3", "--reset-limit", "3",
                "-x", "COUNTER_DIE_AT_START_OF_GENERATION=1");
        awaitCommit(job, dir, "w1", 10);
        kill(dir, "w1");
        LauncherProcessTest.Result r = finish(job, dir);
        assertEquals(0, r.code(), r.out() + r.err());
        assertTrue(r.err().lines().anyMatch(l -> l.startsWith("kolo: reset 2 of at most 3: rank 2 on host localhost"
                + " exited with code 5")), r.err());
        for (String survivor : List.of("[0]<stderr>:kolo: worker w0: ", "[2]<stderr>:kolo: worker w2: ")) {
            assertTrue(r.err().lines().anyMatch(l -> l.startsWith(survivor)
                    && l.endsWith("job 1 was replaced by the launcher's job 2 while it started; joining that")), r.err());
        }
        assertFalse(r.err().contains("timed out"), r.err());
        List<String> done = finished(r);
        assertEquals(List.of("worker w0 done at 60 as rank 0 of 3", "worker w2 done at 60 as rank 1 of 3",
                "worker w4 done at 60 as rank 2 of 3"), done, r.err());
        assertCommitsNeverGoBack(dir);
        assertNothingLeft(dir);
    }

    /**
     * A worker that returns (exit 0) while the others still train ends the resets, so the others, failed by its exit,
     * have no next job to join: they say so at once and the job fails. Before, they waited for one until
     * KOLO_ELASTIC_TIMEOUT_SECONDS (the elastic timeout plus the start timeout, 11 minutes by default), then failed
     * asking whether the launcher was still running.
     */
    @Test
    void aWorkerFinishingWhileOthersTrainFailsThemAtOnce(@TempDir Path dir) throws Exception {
        var job = start(dir, 1000, 30, "-np", "3", "--min-np", "2", "-H", "localhost:3", "--reset-limit", "3",
                "-x", "COUNTER_FINISH_EARLY=w1:10");
        LauncherProcessTest.Result r = finish(job, dir);
        assertEquals(1, r.code(), r.out() + r.err());
        for (String survivor : List.of("[0]<stderr>:", "[2]<stderr>:")) {
            assertTrue(r.err().lines().anyMatch(l -> l.startsWith(survivor) && l.contains("the launcher starts no next"
                    + " job: rank 1 on host localhost finished (exit code 0) while others were training")), r.err());
        }
        assertFalse(r.err().contains("is the launcher still running"), r.err());
        assertNothingLeft(dir);
    }

    /**
     * A survivor dies while the replacement for another is still starting: the replacement, whose first job never
     * forms, joins the next one as a survivor would, rather than failing.
     */
    @Test
    void aReplacementWhoseFirstJobFailsWhileItStartsJoinsTheNext(@TempDir Path dir) throws Exception {
        var job = start(dir, 100, 30, "-np", "3", "--min-np", "2", "-H", "localhost:3", "--reset-limit", "5");
        awaitCommit(job, dir, "w1", 10);
        kill(dir, "w1");
        for (int i = 0; i < 400 && !Files.exists(dir.resolve("pid.w3")); i++) {
            Thread.sleep(25);
        }
        kill(dir, "w2");
        LauncherProcessTest.Result r = finish(job, dir);
        assertEquals(0, r.code(), r.out() + r.err());
        assertTrue(r.out().lines().anyMatch(l -> l.contains("worker w3 done at 100 as rank ")), r.out() + r.err());
        assertCommitsNeverGoBack(dir);
        assertNothingLeft(dir);
    }

    /** The workers' "done" lines, without the launcher's rank tags, sorted: who finished, where, in which rank. */
    static List<String> finished(LauncherProcessTest.Result r) {
        return r.out().lines().filter(l -> l.contains(" done at ")).map(l -> l.substring(l.indexOf(':') + 1))
                .sorted().toList();
    }

    @Test
    void theResetLimitEndsTheJobWithThatMessage(@TempDir Path dir) throws Exception {
        var job = start(dir, 1000, 30, "-np", "2", "--min-np", "1", "-H", "localhost:2", "--reset-limit", "0");
        awaitCommit(job, dir, "w1", 3);
        kill(dir, "w1");
        LauncherProcessTest.Result r = finish(job, dir);
        assertEquals(137, r.code(), r.err());
        assertTrue(r.err().lines().anyMatch(l -> l.startsWith("kolo: rank 1 on host localhost exited with code 137")
                && l.endsWith("; reset limit 0 reached (--reset-limit), stopping the job")), r.err());
        assertNothingLeft(dir);
    }

    @Test
    void fewerThanMinNpSlotsForLongerThanTheElasticTimeoutFailsNamingBothNumbers(@TempDir Path dir) throws Exception {
        Path hosts = dir.resolve("hosts");
        Files.writeString(hosts, "localhost:2\n");
        Path logs = Files.createDirectory(dir.resolve("logs"));
        var job = start(logs, 1000, 30, "-np", "2", "--min-np", "2", "--host-discovery-script", "cat " + hosts,
                "--elastic-timeout", "3");
        awaitCommit(job, logs, "w1", 3);
        kill(logs, "w1");   // with a discovery script the failing host is blacklisted: no slot left
        LauncherProcessTest.Result r = finish(job, dir);
        assertEquals(1, r.code(), r.err());
        assertTrue(r.err().lines().anyMatch(l -> l.contains("host localhost blacklisted; every host is blacklisted (localhost): 0 slots available,"
                + " fewer than --min-np 2, for longer than --elastic-timeout 3 s; stopping the job")), r.err());
        assertNothingLeft(logs);
    }

    /**
     * A job that never forms (one of its two workers dies as it starts, its host is blacklisted) ends with the
     * launcher's line: the worker still waiting for its peer is stopped before the store it waits on goes away. Before,
     * the store went first, and that worker printed a stack trace about a vanished rendezvous server after the line.
     */
    @Test
    void aJobThatNeverFormsEndsWithTheLaunchersLineAndNoStackTrace(@TempDir Path dir) throws Exception {
        Path hosts = dir.resolve("hosts");
        Files.writeString(hosts, "localhost:2\n");
        Path logs = Files.createDirectory(dir.resolve("logs"));
        LauncherProcessTest.Result r = finish(start(logs, 1000, 30, "-np", "2", "--min-np", "2",
                "--host-discovery-script", "cat " + hosts, "--elastic-timeout", "3",
                "-x", "COUNTER_DIE_AT_START_AS_WORKER=w1"), dir);
        assertEquals(1, r.code(), r.err());
        assertTrue(r.err().lines().anyMatch(l -> l.startsWith("kolo: rank 1 on host localhost exited with code 5")
                && l.endsWith("for longer than --elastic-timeout 3 s; stopping the job")), r.err());
        assertFalse(r.err().contains("Exception in thread") || r.err().contains("is gone"), r.err());
        assertNothingLeft(logs);
    }

    @Test
    void hostsAddedByTheDiscoveryScriptJoinAtTheNextCommit(@TempDir Path dir) throws Exception {
        Path hosts = dir.resolve("hosts");
        Files.writeString(hosts, "127.0.0.1:2\n");
        Path logs = Files.createDirectory(dir.resolve("logs"));
        var job = start(logs, 80, 30, "-np", "2", "--min-np", "2", "--max-np", "3", "--host-discovery-script",
                "cat " + hosts);
        awaitCommit(job, logs, "w1", 5);
        Files.writeString(hosts, "127.0.0.1:2\n127.0.0.2\n");
        LauncherProcessTest.Result r = finish(job, dir);
        assertEquals(0, r.code(), r.out() + r.err());
        assertTrue(r.err().lines().anyMatch(l -> l.equals(
                "kolo: reset 1: host 127.0.0.2 added; job 1 has 3 ranks (127.0.0.1:2,127.0.0.2:1)")), r.err());
        assertEquals(List.of("[0]<stdout>:worker w0 done at 80 as rank 0 of 3",
                "[1]<stdout>:worker w1 done at 80 as rank 1 of 3", "[2]<stdout>:worker w2 done at 80 as rank 2 of 3"),
                r.out().lines().filter(l -> l.contains(" done at ")).sorted().toList(), r.err());
        assertCommitsNeverGoBack(logs);
        assertNothingLeft(logs);
    }

    /**
     * A discovery script that fails for a while is warned about once, and once more when it answers again: before,
     * the launcher printed the same warning every second for as long as it failed.
     */
    @Test
    void aDiscoveryScriptFailingForAWhileIsWarnedAboutOnce(@TempDir Path dir) throws Exception {
        Path hosts = dir.resolve("hosts");
        Files.writeString(hosts, "localhost:2\n");
        Path logs = Files.createDirectory(dir.resolve("logs"));
        var job = start(logs, 250, 30, "-np", "2", "--min-np", "2", "--host-discovery-script", "cat " + hosts);
        awaitCommit(job, logs, "w1", 5);
        Path away = dir.resolve("hosts.away");
        Files.move(hosts, away);
        Thread.sleep(4500);   // four polls or more
        Files.move(away, hosts);
        LauncherProcessTest.Result r = finish(job, dir);
        assertEquals(0, r.code(), r.out() + r.err());
        List<String> warnings = r.err().lines().filter(l -> l.startsWith("kolo: warning: --host-discovery-script"))
                .toList();
        assertEquals(List.of("kolo: warning: --host-discovery-script cat " + hosts + " exited with code 1: cat: " + hosts
                + ": No such file or directory; keeping the hosts found before until it answers again"), warnings,
                r.err());
        assertEquals(1, r.err().lines().filter(l -> l.equals("kolo: --host-discovery-script answers again")).count(), r.err());
        assertNothingLeft(logs);
    }

    @Test
    void aCollectiveOutsideElasticRunFailsEveryRankAtOnceNamingTheFix() throws Exception {
        for (String when : List.of("before", "after", "commit")) {
            LauncherProcessTest.Result r = LauncherProcessTest.kolo("run", "-np", "2", "--min-np", "2", "-H",
                    "localhost:2", "--start-timeout", "20", "-cp", CP, ElasticOutside.class.getName(), when);
            assertEquals(1, r.code(), when + ": " + r.out() + r.err());
            for (int rank = 0; rank < 2; rank++) {
                String line = "[" + rank + "]<stderr>:Exception in thread \"main\" java.lang.IllegalStateException: a Kolo"
                        + " collective was called outside Elastic.run in an elastic job";
                assertTrue(r.err().lines().anyMatch(l -> l.startsWith(line) && l.endsWith(
                        "call collectives inside Elastic.run(state, body) in an elastic job")), when + ": " + r.err());
            }
            assertTrue(r.err().lines().anyMatch(l -> l.startsWith("kolo: all 2 ranks of job 0 failed: ")), r.err());
        }
    }

    /** The job's result; on a hang, every worker's log in the failure message. */
    static LauncherProcessTest.Result finish(CompletableFuture<LauncherProcessTest.Result> job, Path dir)
            throws Exception {
        try {
            return job.get(90, java.util.concurrent.TimeUnit.SECONDS);
        } catch (java.util.concurrent.TimeoutException e) {
            StringBuilder logs = new StringBuilder();
            try (Stream<Path> files = Files.list(dir)) {
                for (Path f : files.sorted().toList()) {
                    logs.append(f.getFileName()).append(":\n").append(Files.readString(f)).append('\n');
                }
            }
            throw new AssertionError("the job did not end within 90 s; " + logs);
        }
    }

    static void awaitCommit(CompletableFuture<LauncherProcessTest.Result> job, Path dir, String worker,
                                    int step) throws Exception {
        Path log = dir.resolve("log." + worker);
        for (int i = 0; i < 1200; i++) {
            if (job.isDone()) {
                throw new AssertionError("the job ended before " + worker + " committed step " + step + ": "
                        + job.get());
            }
            if (Files.exists(log) && Files.readAllLines(log).stream().anyMatch(l -> l.startsWith("commit " + step + " "))) {
                return;
            }
            Thread.sleep(50);
        }
        throw new AssertionError(worker + " never committed step " + step);
    }

    static void kill(Path dir, String worker) throws IOException {
        long pid = Long.parseLong(Files.readString(dir.resolve("pid." + worker)).trim());
        ProcessHandle.of(pid).orElseThrow().destroyForcibly();   // SIGKILL: no shutdown hook, no last words
    }

    static void assertCommitsNeverGoBack(Path dir) throws IOException {
        TestAccess.assertCommitsNeverGoBack(dir);
    }

    static void assertNothingLeft(Path dir) throws Exception {
        try (Stream<Path> files = Files.list(dir)) {
            for (Path f : files.filter(p -> p.getFileName().toString().startsWith("pid.")).toList()) {
                long pid = Long.parseLong(Files.readString(f).trim());
                for (int i = 0; i < 100 && ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false); i++) {
                    Thread.sleep(50);
                }
                assertFalse(ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false),
                        f.getFileName() + " (pid " + pid + ") is still running");
            }
        }
    }
}
