package io.kolo.launcher;

import io.kolo.launcher.workers.Worker;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Real Kolo programs, real processes, real sockets, through kolo run. */
@Timeout(120)
class KoloJobTest {
    private static final String CP = System.getProperty("java.class.path");

    private static LauncherProcessTest.Result job(int np, String mode, Path pids, String... extra) {
        List<String> args = new java.util.ArrayList<>(List.of("run", "-np", Integer.toString(np)));
        args.addAll(List.of(extra));
        args.addAll(List.of("-cp", CP, Worker.class.getName(), mode, pids.toString()));
        return LauncherProcessTest.kolo(args.toArray(String[]::new));
    }

    private static void assertNothingLeft(Path pids) throws IOException {
        try (Stream<Path> files = Files.list(pids)) {
            for (Path f : files.toList()) {
                long pid = Long.parseLong(Files.readString(f).trim());
                assertFalse(ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false),
                        f.getFileName() + " (pid " + pid + ") is still running");
            }
        }
    }

    @Test
    void ranksAllreduceOverTcpThroughKoloRun(@TempDir Path pids) throws IOException {
        LauncherProcessTest.Result r = job(3, "steady", pids, "-x", "KOLO_TRANSPORT=tcp");
        assertEquals(0, r.code(), r.out() + r.err());
        assertEquals(List.of("[0]<stdout>:rank 0 ok", "[1]<stdout>:rank 1 ok", "[2]<stdout>:rank 2 ok"),
                r.out().lines().filter(l -> l.contains(" ok")).sorted().toList());
        assertNothingLeft(pids);
    }

    /**
     * Kolo.init() again after Kolo.shutdown() joins a new job through the same launcher (as hvd.init() after
     * hvd.shutdown()). The launcher's store still held the first job's data-plane keys: a rank mapped the other's
     * removed shared-memory segment and failed ("could not map rank 0's shared-memory segment ...").
     */
    @Test
    void ranksJoinAgainAfterShutdown(@TempDir Path pids) {
        for (String transport : new String[] {"shm", "tcp"}) {
            LauncherProcessTest.Result r = job(2, "rejoin", pids, "-x", "KOLO_TRANSPORT=" + transport);
            assertEquals(0, r.code(), transport + ": " + r.out() + r.err());
            assertEquals(List.of("[0]<stdout>:rank 0 ok", "[0]<stdout>:rank 0 ok", "[1]<stdout>:rank 1 ok",
                    "[1]<stdout>:rank 1 ok"), r.out().lines().filter(l -> l.contains(" ok")).sorted().toList(),
                    transport);
        }
    }

    /** Adasum across processes (three ranks: the remainder step too), over shared memory and over TCP. */
    @Test
    void adasumAcrossProcesses(@TempDir Path pids) {
        for (String transport : new String[] {"shm", "tcp"}) {
            LauncherProcessTest.Result r = job(3, "adasum", pids, "-x", "KOLO_TRANSPORT=" + transport);
            assertEquals(0, r.code(), r.out() + r.err());
            assertEquals(List.of("[0]<stdout>:rank 0 adasum [1.0, 1.0, 1.0]", "[1]<stdout>:rank 1 adasum [1.0, 1.0, 1.0]",
                    "[2]<stdout>:rank 2 adasum [1.0, 1.0, 1.0]"), r.out().lines().sorted().toList(), transport);
        }
    }

    /**
     * --bind-to core with more ranks than CPUs (here each rank may use CPU 0 only): one kolo: line for the host.
     * Before: every rank printed java.util.logging's two lines (a time stamp and the class, then "WARNING: ...").
     */
    @Test
    void bindingMoreRanksThanCpusIsOneLineForTheHost(@TempDir Path pids) {
        org.junit.jupiter.api.Assumptions.assumeTrue(Files.isExecutable(Path.of("/usr/bin/taskset")), "no taskset");
        LauncherProcessTest.Result r = LauncherProcessTest.kolo("run", "-np", "3", "--bind-to", "core", "--",
                "/usr/bin/taskset", "-c", "0", ChildCommand.javaExecutable(), ChildCommand.NATIVE_ACCESS, "-cp", CP,
                Worker.class.getName(), "steady", pids.toString());
        assertEquals(0, r.code(), r.out() + r.err());
        List<String> said = r.err().lines().filter(l -> !l.isBlank()).toList();
        assertEquals(1, said.size(), r.err());
        assertTrue(said.getFirst().matches("\\[0\\]<stderr>:kolo: KOLO_BIND_TO=core ignored on .*: 3 ranks on this"
                + " host but only 1 CPU \\(0\\) to bind them to"), r.err());
    }

    @Test
    void ranksAllreduceOverSharedMemoryThroughKoloRun(@TempDir Path pids) throws IOException {
        org.junit.jupiter.api.Assumptions.assumeTrue(io.kolo.transport.ShmSegments.available(),
                "skipped: no writable /dev/shm");
        LauncherProcessTest.Result r = job(3, "steady", pids, "-x", "KOLO_TRANSPORT=shm");
        assertEquals(0, r.code(), r.out() + r.err());
        assertEquals(3, r.out().lines().filter(l -> l.contains(" ok")).count(), r.out() + r.err());
        assertNothingLeft(pids);
        assertNoSegmentsLeft(pids);
    }

    /** SIGKILL leaves no chance to clean up: the survivors must still fail fast, and /dev/shm must be clean. */
    @Test
    void aRankKilledMidAllreduceOverSharedMemoryFailsTheOthersFast(@TempDir Path pids) throws IOException {
        org.junit.jupiter.api.Assumptions.assumeTrue(io.kolo.transport.ShmSegments.available(),
                "skipped: no writable /dev/shm");
        LauncherProcessTest.Result r = job(3, "kill-mid-allreduce", pids, "-x", "KOLO_TRANSPORT=shm");
        assertEquals(137, r.code(), r.out() + r.err());
        assertTrue(r.err().contains("kolo: rank 1 exited with code 137 (killed by SIGKILL"), r.err());
        List<String> failedFast = r.out().lines().filter(l -> l.contains("failed fast")).toList();
        assertEquals(2, failedFast.size(), "every other rank reports the failure itself:\n" + r.out() + r.err());
        for (String line : failedFast) {
            assertTrue(line.contains("rank 1"), line);
        }
        assertNothingLeft(pids);
        assertNoSegmentsLeft(pids);
    }

    /** No /dev/shm segment created by one of the job's ranks remains (its name ends with the creator's pid). */
    private static void assertNoSegmentsLeft(Path pids) throws IOException {
        Path shm = Path.of("/dev/shm");
        java.util.Set<String> rankPids = new java.util.HashSet<>();
        try (Stream<Path> files = Files.list(pids)) {
            for (Path f : files.toList()) {
                rankPids.add(Files.readString(f).trim());
            }
        }
        try (Stream<Path> files = Files.list(shm)) {
            List<String> left = files.map(f -> f.getFileName().toString())
                    .filter(n -> n.startsWith("kolo-") && rankPids.contains(n.substring(n.lastIndexOf('-') + 1)))
                    .toList();
            assertEquals(List.of(), left, "segments of this job are left in /dev/shm");
        }
    }

    @Test
    void theBundledAllreduceExampleRunsAsTheReadmeSays() throws IOException {
        Path examples = ChildCommand.koloHome(System.getenv()).resolve("kolo-examples/target");
        boolean built;
        try (Stream<Path> files = Files.exists(examples) ? Files.list(examples) : Stream.empty()) {
            built = files.anyMatch(f -> f.getFileName().toString().matches("kolo-examples-.*\\.jar"));
        }
        org.junit.jupiter.api.Assumptions.assumeTrue(built,
                "skipped: kolo-examples is not packaged yet (run the whole build: ./mvnw verify)");
        LauncherProcessTest.Result r = LauncherProcessTest.kolo("run", "-np", "3", "--example", "allreduce", "--",
                "--elements", "10000", "--iterations", "3");
        assertEquals(0, r.code(), r.out() + r.err());
        assertEquals(3, r.out().lines().filter(l -> l.matches("\\[\\d]<stdout>:allreduce of 10000 floats x 3: every element = 6 \\(correct\\).*")).count(),
                r.out());
        assertTrue(r.out().contains("[0]<stdout>:allgather of ranks: [0.0, 1.0, 2.0]"), r.out());
        assertTrue(r.out().lines().anyMatch(l -> l.matches("\\[0]<stdout>:first op [0-9.]+ ms, ops 2-3 [0-9.]+ ms avg"
                + " \\(more than 10 --iterations for the steady state\\)")), r.out());
    }

    @Test
    void aRankExitingMidAllreduceFailsTheOthersFastNamingItsCause(@TempDir Path pids) throws IOException {
        LauncherProcessTest.Result r = job(4, "exit-mid-allreduce", pids);
        assertEquals(3, r.code(), r.out() + r.err());
        String cause = "rank 1 failed: called System.exit at " + Worker.class.getName() + ".main(Worker.java:";
        assertTrue(r.err().contains("kolo: " + cause) && r.err().contains("(exit code 3); terminating the other 3 ranks"),
                r.err());
        List<String> failedFast = r.out().lines().filter(l -> l.contains("failed fast")).toList();
        assertEquals(3, failedFast.size(), "every other rank reports the failure itself:\n" + r.out() + r.err());
        for (String line : failedFast) {
            assertTrue(line.contains("RankFailedException") && line.contains(cause) && line.contains("(exit code 3)"),
                    line);
        }
        assertNothingLeft(pids);
    }

    /**
     * The cause travels: every rank and the launcher print the failing rank's own exception, not only its code; also
     * with {@code finally { Kolo.shutdown(); }} around the loop, as the bundled examples have ({@code -finally}): rank 2
     * then leaves the job before its exception reaches the JVM, and the others, whose allreduce its leaving ends, must
     * still name it.
     */
    @ParameterizedTest
    @ValueSource(strings = {"uncaught-throw", "uncaught-throw-finally"})
    void anUncaughtExceptionIsNamedOnEveryRankAndByTheLauncher(String mode, @TempDir Path pids) throws IOException {
        LauncherProcessTest.Result r = job(4, mode, pids);
        String cause = "rank 2 failed: IllegalStateException: injected failure at iteration 20 (exit code 1)";
        assertEquals(1, r.code(), r.err());
        assertTrue(r.err().contains("kolo: " + cause + "; terminating the other 3 ranks"), r.err());
        for (int rank : new int[]{0, 1, 3}) {
            assertTrue(r.err().lines().anyMatch(l -> l.startsWith("[" + rank + "]<stderr>:") && l.contains(cause)),
                    "rank " + rank + " does not name the cause:\n" + r.err());
        }
        assertNothingLeft(pids);
    }

    /** A rank that joined but never calls is named by the ranks whose wait for it times out. */
    @Test
    void aRankThatNeverCallsIsNamedWhenTheOthersTimeOut(@TempDir Path pids) throws IOException {
        LauncherProcessTest.Result r = job(3, "uncaught-never-call", pids, "-x", "KOLO_TIMEOUT_SECONDS=5");
        assertEquals(1, r.code(), r.err());
        for (int rank : new int[]{0, 1}) {
            assertTrue(r.err().lines().anyMatch(l -> l.startsWith("[" + rank + "]<stderr>:")
                            && l.contains("rank 2 had not submitted it after")),
                    "rank " + rank + " does not name rank 2:\n" + r.err());
        }
        assertTrue(r.err().contains("rank 2 had not submitted it") && r.err().contains("kolo: rank "), r.err());
        assertNothingLeft(pids);
    }

    @Test
    void ctrlCStopsEveryRankMidAllreduce(@TempDir Path dir) throws Exception {
        Sigint.assumeDeliverable();
        Path pids = Files.createDirectory(dir.resolve("pids"));
        ProcessBuilder pb = new ProcessBuilder(ChildCommand.javaExecutable(), "-cp", CP, Main.class.getName(), "run",
                "-np", "3", "-cp", CP, Worker.class.getName(), "forever", pids.toString());
        pb.redirectErrorStream(true);
        pb.redirectOutput(dir.resolve("launcher.log").toFile());
        Process launcher = pb.start();
        try {
            long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(60);
            while (Files.readString(dir.resolve("launcher.log")).split("reducing", -1).length < 4) {
                assertTrue(System.nanoTime() < deadline, "ranks did not start: " + Files.readString(dir.resolve("launcher.log")));
                assertTrue(launcher.isAlive(), "launcher died: " + Files.readString(dir.resolve("launcher.log")));
                Thread.sleep(50);
            }
            new ProcessBuilder("kill", "-INT", Long.toString(launcher.pid())).inheritIO().start().waitFor();
            assertTrue(launcher.waitFor(30, java.util.concurrent.TimeUnit.SECONDS), "kolo run ignored Ctrl-C");
            String log = Files.readString(dir.resolve("launcher.log"));
            assertTrue(log.contains("kolo: interrupted; terminating"), log);
            long stop = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(5);
            while (System.nanoTime() < stop) {
                try {
                    assertNothingLeft(pids);
                    return;
                } catch (AssertionError stillDying) {
                    Thread.sleep(50);
                }
            }
            assertNothingLeft(pids);
        } finally {
            launcher.destroyForcibly();
        }
    }

    @Test
    void aRankThatNeverStartsIsNamedAtTheStartTimeout(@TempDir Path pids) throws IOException {
        LauncherProcessTest.Result r = job(3, "never-init-rank-2", pids, "--start-timeout", "3");
        assertTrue(r.code() != 0, r.out());
        String failures = String.join("\n", r.out().lines().filter(l -> l.contains("failed fast")).toList());
        assertTrue(failures.contains("rank 2") || failures.contains("ranks 2"), r.out() + r.err());
        assertTrue(failures.contains("KOLO_START_TIMEOUT_SECONDS"), failures);
        assertNothingLeft(pids);
    }
}
