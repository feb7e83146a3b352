package io.kolo.launcher;

import io.kolo.launcher.job.Job;
import io.kolo.launcher.start.RankLaunch;
import io.kolo.launcher.start.TaggedOutput;

import io.kolo.bootstrap.KeyValueStore;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Real processes (sh, sleep, a launcher JVM), none of the rest of Kolo. */
@Timeout(60)
class LauncherProcessTest {

    record Result(int code, String out, String err) {
    }

    static Result kolo(String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code;
        try (PrintStream o = new PrintStream(out, true, StandardCharsets.UTF_8);
             PrintStream e = new PrintStream(err, true, StandardCharsets.UTF_8)) {
            code = Main.run(args, o, e);
        }
        return new Result(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    @Test
    void outputIsTaggedPerRankAndStream() {
        Result r = kolo("run", "-np", "3", "--", "sh", "-c", "echo hello from $KOLO_RANK; echo oops $KOLO_RANK >&2");
        assertEquals(0, r.code(), r.err());
        assertEquals(List.of("[0]<stdout>:hello from 0", "[1]<stdout>:hello from 1", "[2]<stdout>:hello from 2"),
                r.out().lines().sorted().toList());
        assertEquals(List.of("[0]<stderr>:oops 0", "[1]<stderr>:oops 1", "[2]<stderr>:oops 2"),
                r.err().lines().sorted().toList());
    }

    /**
     * kolo run ... | head: once the reader has gone, the ranks are stopped and kolo run exits 141 (as a process that
     * SIGPIPE ended), where it ran the whole job with its output going nowhere.
     */
    @Test
    void aClosedStdoutStopsTheJob() {
        java.util.concurrent.atomic.AtomicInteger lines = new java.util.concurrent.atomic.AtomicInteger();
        java.io.OutputStream head = new java.io.OutputStream() {
            @Override
            public void write(int b) throws IOException {
                if (b == '\n' && lines.incrementAndGet() > 2) {
                    throw new IOException("Broken pipe");
                }
            }
        };
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code;
        try (PrintStream o = new PrintStream(head, true, StandardCharsets.UTF_8);
             PrintStream e = new PrintStream(err, true, StandardCharsets.UTF_8)) {
            // Each rank would print for ten minutes, past the class's timeout.
            code = Main.run(new String[] {"run", "-np", "2", "--", "sh", "-c",
                    "end=$(($(date +%s) + 600)); while [ $(date +%s) -lt $end ]; do echo line; done"}, o, e);
        }
        String errors = err.toString(StandardCharsets.UTF_8);
        assertEquals(141, code, errors);
        // Rank 1 may not have started yet when rank 0 has filled the reader's two lines.
        assertTrue(errors.lines().anyMatch(l -> l.matches("kolo: the output was closed \\(broken pipe\\); terminating"
                + " (1 rank|2 ranks)")), errors);
    }

    @Test
    void linesAreNeverSplitAcrossRanks() {
        // Many long lines from several ranks at once: every launcher line must be one whole rank line.
        String script = "i=0; while [ $i -lt 200 ]; do echo \"$KOLO_RANK-$(printf '%0300d' $i)\"; i=$((i+1)); done";
        Result r = kolo("run", "-np", "4", "--", "sh", "-c", script);
        assertEquals(0, r.code(), r.err());
        List<String> lines = r.out().lines().toList();
        assertEquals(800, lines.size());
        for (String line : lines) {
            assertTrue(line.matches("\\[(\\d)]<stdout>:\\1-\\d{300}"), line);
        }
    }

    @Test
    void ranksGetTheirEnvironmentIncludingTheSecretButVerboseNeverShowsIt(@TempDir Path dir) throws IOException {
        Result r = kolo("run", "-np", "2", "--verbose", "-x", "GREETING=hi there", "--start-timeout", "7", "--",
                "sh", "-c", "env | grep -e ^KOLO_ -e ^GREETING= | sort > " + dir + "/env.$KOLO_RANK");
        assertEquals(0, r.code(), r.err());
        List<String> env1 = Files.readAllLines(dir.resolve("env.1"));
        String secretLine = env1.stream().filter(l -> l.startsWith("KOLO_SECRET=")).findFirst().orElseThrow();
        String secret = secretLine.substring("KOLO_SECRET=".length());
        assertTrue(secret.matches("[0-9a-f]{64}"), secret);
        assertEquals(secretLine, Files.readAllLines(dir.resolve("env.0")).stream()
                .filter(l -> l.startsWith("KOLO_SECRET=")).findFirst().orElseThrow());
        assertTrue(env1.containsAll(List.of("GREETING=hi there", "KOLO_RANK=1", "KOLO_SIZE=2", "KOLO_LOCAL_RANK=1",
                "KOLO_LOCAL_SIZE=2", "KOLO_CROSS_RANK=0", "KOLO_CROSS_SIZE=1", "KOLO_HOSTNAME=localhost",
                "KOLO_RENDEZVOUS_ADDR=127.0.0.1", "KOLO_RENDEZVOUS_SERVER=launcher",
                "KOLO_START_TIMEOUT_SECONDS=7")), env1.toString());
        assertTrue(env1.stream().anyMatch(l -> l.matches("KOLO_RENDEZVOUS_PORT=\\d+")), env1.toString());

        assertTrue(r.err().contains("kolo: rank 1: sh -c "), r.err());
        assertTrue(r.err().contains("KOLO_RANK=1"), r.err());
        assertFalse(r.err().contains(secret), r.err());
        assertFalse(r.out().contains(secret), r.out());
        assertFalse(r.err().contains("KOLO_SECRET"), r.err());
        assertFalse(r.err().contains("hi there"), "-x values may be credentials: " + r.err());
    }

    @Test
    void aFailingRankTakesTheOthersDownAndItsCodeIsTheExitCode(@TempDir Path dir) throws Exception {
        // Every rank records its shell and its sleeping child; rank 1 fails once all are recorded.
        String script = "sleep 60 & echo $$ $! > " + dir + "/pids.$KOLO_RANK; "
                + "if [ $KOLO_RANK = 1 ]; then "
                + "  while [ ! -s " + dir + "/pids.0 ] || [ ! -s " + dir + "/pids.2 ]; do sleep 0.05; done; "
                + "  echo last words >&2; exit 3; fi; wait";
        Result r = kolo("run", "-np", "3", "--", "sh", "-c", script);
        assertEquals(3, r.code(), r.err());
        assertTrue(r.err().contains("[1]<stderr>:last words\n"), r.err());
        assertTrue(r.err().lines().anyMatch("kolo: rank 1 exited with code 3; terminating the other 2 ranks"::equals),
                r.err());
        assertTrue(r.err().indexOf("last words") < r.err().indexOf("kolo: rank 1 exited"), r.err());
        assertAllGone(pidsIn(dir));
    }

    @Test
    void aRankKilledBySignalReports128PlusTheSignal() {
        Result r = kolo("run", "-np", "2", "--", "sh", "-c", "if [ $KOLO_RANK = 0 ]; then kill -KILL $$; fi; sleep 60");
        assertEquals(137, r.code(), r.err());
        assertTrue(r.err().contains("kolo: rank 0 exited with code 137 (killed by SIGKILL: the out-of-memory killer,"
                + " a scheduler's hard limit, or kill -9); terminating the other 1 rank"), r.err());
    }

    /** A shell command run as a rank on this host, through the wrapper, as kolo run starts ranks. */
    private static RankLaunch local(int rank, String script) {
        return RankLaunch.local(rank, List.of("sh", "-c", script), Map.of(), Path.of("").toAbsolutePath().toString());
    }

    @Test
    void failureIsRecordedInTheStoreBeforeTheOthersAreKilled() throws Exception {
        MapStore store = new MapStore();
        PrintStream sink = new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8);
        List<RankLaunch> ranks = List.of(
                local(0, "sleep 60"),
                local(1, "exit 5"));
        assertEquals(5, new Job(ranks, store, sink, sink, null, Duration.ofSeconds(5)).run());
        assertEquals(Optional.of("rank 1 exited with code 5"), store.tryGet("failed/1"));
        assertEquals(Optional.empty(), store.tryGet("failed/0"));
    }

    @Test
    void ranksThatIgnoreSigtermAreKilledAfterTheGracePeriod(@TempDir Path dir) throws Exception {
        PrintStream sink = new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8);
        List<RankLaunch> ranks = List.of(
                local(0, "trap '' TERM; sleep 60 & echo $$ $! > " + dir + "/pids.0; wait; wait"),
                local(1, "while [ ! -s " + dir + "/pids.0 ]; do sleep 0.05; done; exit 4"));
        long start = System.nanoTime();
        assertEquals(4, new Job(ranks, new MapStore(), sink, sink, null, Duration.ofMillis(500)).run());
        assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(10));
        assertAllGone(pidsIn(dir));
    }

    @Test
    void backgroundProcessesLeftBySuccessfulRanksAreStoppedAtTheEnd(@TempDir Path dir) throws Exception {
        Result r = kolo("run", "-np", "2", "--", "sh", "-c",
                "sleep 60 > /dev/null 2>&1 & echo $! > " + dir + "/pids.$KOLO_RANK; sleep 0.5; exit 0");
        assertEquals(0, r.code(), r.err());
        assertAllGone(pidsIn(dir));
    }

    @Test
    void outputDirGetsRawLinesPerRank(@TempDir Path dir) throws IOException {
        Path outDir = dir.resolve("logs");
        Result r = kolo("run", "-np", "2", "--output-dir", outDir.toString(), "--",
                "sh", "-c", "echo out $KOLO_RANK; echo err $KOLO_RANK >&2; printf 'no newline'");
        assertEquals(0, r.code(), r.err());
        for (int rank = 0; rank < 2; rank++) {
            assertEquals(List.of("out " + rank, "no newline"), Files.readAllLines(outDir.resolve("rank." + rank + "/stdout")));
            assertEquals(List.of("err " + rank), Files.readAllLines(outDir.resolve("rank." + rank + "/stderr")));
        }
        assertTrue(r.out().contains("[1]<stdout>:no newline\n"), r.out());
    }

    /**
     * The file holds exactly the bytes the rank wrote, as Open MPI's --output-filename: a line longer than the screen's
     * limit, a CRLF and a last line without a newline come back unchanged. Before: a newline was inserted every
     * 64 KiB (a long JSON line became two), CRs were dropped and a newline was added at the end.
     */
    @Test
    void outputDirFilesHoldExactlyWhatTheRankWrote(@TempDir Path dir) throws IOException {
        Path outDir = dir.resolve("logs");
        Path expected = dir.resolve("expected");
        String script = "i=0; while [ $i -lt 1500 ]; do printf '0123456789%040d' $i; i=$((i+1)); done;"
                + " printf '\\nwindows\\r\\nlast'";
        Result r = kolo("run", "-np", "1", "--output-dir", outDir.toString(), "--", "sh", "-c",
                "{ " + script + "; } | tee " + expected);
        assertEquals(0, r.code(), r.err());
        byte[] wrote = Files.readAllBytes(expected);
        assertEquals(1500 * 50 + "\nwindows\r\nlast".length(), wrote.length);
        assertTrue(java.util.Arrays.equals(wrote, Files.readAllBytes(outDir.resolve("rank.0/stdout"))),
                "the file differs from what the rank wrote");
        // On screen each line is still tagged and cut at TaggedOutput.MAX_LINE.
        assertEquals(4, r.out().lines().count(), r.out().length() + " chars");
    }

    @Test
    void usageErrorsExit2WithOneLine() {
        for (String[] args : List.of(
                new String[] {"run"},
                new String[] {"run", "-np", "2"},
                new String[] {"run", "-np", "x", "--", "true"},
                new String[] {"run", "-np", "2", "--frobnicate", "--", "true"},
                new String[] {"run", "-np", "4", "-H", "localhost:2", "--", "true"},
                new String[] {"bogus"},
                new String[] {})) {
            Result r = kolo(args);
            assertEquals(2, r.code(), String.join(" ", args) + ": " + r.err());
            assertEquals(1, r.err().lines().count(), String.join(" ", args) + ": " + r.err());
            assertTrue(r.err().startsWith("kolo: "), r.err());
            assertEquals("", r.out());
        }
        assertEquals("kolo: -np 4 needs 4 slots but the hosts provide only 2 (localhost:2)\n",
                kolo("run", "-np", "4", "-H", "localhost:2", "--", "true").err());
    }

    @Test
    void helpExits0() {
        Result r = kolo("run", "--help");
        assertEquals(0, r.code());
        assertTrue(r.out().contains("--start-timeout"), r.out());
    }

    /** mpirun passes arguments as given; picocli would otherwise replace "@FILE" by the file's contents. */
    @Test
    void atFileArgumentsReachTheProgramVerbatim(@TempDir Path dir) throws IOException {
        Path file = Files.writeString(dir.resolve("args"), "--expanded");
        Result r = kolo("run", "-np", "1", "--", "echo", "@" + file, "@" + dir.resolve("missing"));
        assertEquals(0, r.code(), r.err());
        assertTrue(r.out().contains("[0]<stdout>:@" + file + " @" + dir.resolve("missing")), r.out());
        Result jar = kolo("run", "-np", "1", "sh", "-c", "echo \"$0\"", "@" + file);
        assertTrue(jar.out().contains("[0]<stdout>:@" + file), jar.out() + jar.err());
    }

    @Test
    void anUnwritableOutputDirIsNamedWithTheReason() {
        Result r = kolo("run", "-np", "1", "--output-dir", "/proc/kolo-output", "--", "true");
        assertEquals(127, r.code());
        assertTrue(r.err().contains("kolo: cannot start rank 0 (true): cannot write its output under /proc/kolo-output/rank.0: "
                + "no such file or directory"), r.err());
        assertFalse(r.err().contains("java") || r.err().contains("Exception"), r.err());
    }

    @Test
    void badKoloSettingsAreRefusedOnceBeforeAnyRankStarts() {
        Result r = kolo("run", "-np", "2", "-x", "KOLO_CYCLE_TIME=fast", "--", "echo", "started");
        assertEquals(2, r.code());
        assertEquals("kolo: KOLO_CYCLE_TIME='fast' is invalid: expected a non-negative number of milliseconds"
                + " (no rank was started)", r.err().strip());
        assertFalse(r.out().contains("started"), r.out());
    }

    /** A rank started by someone else (mpirun, by hand) with a bad setting: one line, exit 2, no stack trace. */
    @Test
    void aRanksOwnBadSettingIsOneLineAndExitCode2() throws Exception {
        ProcessBuilder pb = new ProcessBuilder(ChildCommand.javaExecutable(), ChildCommand.NATIVE_ACCESS, "-cp",
                System.getProperty("java.class.path"), io.kolo.launcher.workers.MpiWorker.class.getName());
        pb.environment().put("KOLO_TRANSPORT", "carrier-pigeon");
        pb.redirectErrorStream(true);
        Process p = pb.start();
        String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS));
        assertEquals(2, p.exitValue(), output);
        assertTrue(output.strip().startsWith("kolo: KOLO_TRANSPORT='carrier-pigeon' is invalid: expected auto"), output);
        assertEquals(1, output.strip().lines().count(), output);
    }

    /**
     * What a rank started by mpirun or srun is missing, or a variable of the user's it cannot use: as a bad setting,
     * one line saying what to set and exit code 2 on every rank, not a stack trace per rank.
     */
    @org.junit.jupiter.params.ParameterizedTest
    @org.junit.jupiter.params.provider.ValueSource(strings = {
            "KOLO_IFACE=kolo-no-such-if|kolo: KOLO_IFACE='kolo-no-such-if' is invalid: expected a network interface",
            "OMPI_COMM_WORLD_RANK=1 OMPI_COMM_WORLD_SIZE=4 OMPI_COMM_WORLD_LOCAL_RANK=1 OMPI_COMM_WORLD_LOCAL_SIZE=2"
                    + " OMPI_MCA_ess_base_jobid=7|kolo: this Open MPI job spans hosts (2 of its 4 ranks on this one)",
            "SLURM_PROCID=1 SLURM_NTASKS=2 SLURM_JOB_ID=7 KOLO_RENDEZVOUS_ADDR=127.0.0.1"
                    + "|kolo: ranks on several hosts need a shared secret and neither KOLO_SECRET nor ",
            "SLURM_PROCID=1 SLURM_NTASKS=2 SLURM_JOB_ID=7 KOLO_RENDEZVOUS_ADDR=kolo-no-such-host.invalid"
                    + " KOLO_SECRET=00112233445566778899aabbccddeeff"
                    + "|kolo: KOLO_RENDEZVOUS_ADDR=kolo-no-such-host.invalid does not resolve"})
    void whatARankStartedElsewhereLacksIsOneLineAndExitCode2(String envAndExpected, @TempDir Path home)
            throws Exception {
        String[] parts = envAndExpected.split("\\|");
        ProcessBuilder pb = new ProcessBuilder(ChildCommand.javaExecutable(), ChildCommand.NATIVE_ACCESS, "-cp",
                System.getProperty("java.class.path"), io.kolo.launcher.workers.MpiWorker.class.getName());
        pb.environment().keySet().removeIf(k -> k.startsWith("KOLO_") || k.startsWith("OMPI_") || k.startsWith("PMIX_")
                || k.startsWith("PMI_") || k.startsWith("SLURM_") || k.startsWith("HOROVOD_"));
        pb.environment().put("HOME", home.toString());
        for (String kv : parts[0].split(" ")) {
            pb.environment().put(kv.substring(0, kv.indexOf('=')), kv.substring(kv.indexOf('=') + 1));
        }
        pb.redirectErrorStream(true);
        Process p = pb.start();
        String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS));
        assertEquals(2, p.exitValue(), output);
        assertTrue(output.strip().startsWith(parts[1]), output);
        assertEquals(1, output.strip().lines().count(), output);
    }

    /**
     * As mpirun does, a relative program path is the rank's: under -wdir DIR, ./prog is DIR/prog. Before: refused with
     * "./prog: No such file or directory" unless the launcher's own directory had one too.
     */
    @Test
    void aRelativeProgramIsLookedUpInTheRanksWorkingDirectory(@TempDir Path dir) throws IOException {
        Path prog = dir.resolve("kolo-wdir-prog.sh");
        Files.writeString(prog, "#!/bin/sh\necho ran in $(pwd)\n");
        prog.toFile().setExecutable(true);
        Result r = kolo("run", "-np", "1", "-wdir", dir.toString(), "--", "./kolo-wdir-prog.sh");
        assertEquals(0, r.code(), r.err());
        assertEquals("[0]<stdout>:ran in " + dir.toRealPath(), r.out().strip());
        Result missing = kolo("run", "-np", "1", "-wdir", dir.toString(), "--", "./kolo-no-such-prog.sh");
        assertEquals(127, missing.code());
        assertTrue(missing.err().contains("kolo: cannot start rank 0 (./kolo-no-such-prog.sh): ./kolo-no-such-prog.sh:"
                + " No such file or directory (in " + dir.toRealPath() + ", the ranks' working directory)"), missing.err());
    }

    /**
     * A script whose #! interpreter does not exist, most often a script saved with Windows line endings (#!/bin/sh
     * then names "/bin/sh\r"). Before: "setsid: failed to execute ./job.sh: No such file or directory" from every rank,
     * about a file that is there, then "kolo: rank 0 exited with code 127".
     */
    @Test
    void aScriptWhoseInterpreterIsMissingIsNamedBeforeAnyRankStarts(@TempDir Path dir) throws IOException {
        Path crlf = dir.resolve("crlf.sh");
        Files.writeString(crlf, "#!/bin/sh\r\necho hi\r\n");
        crlf.toFile().setExecutable(true);
        Result r = kolo("run", "-np", "2", "--", crlf.toString());
        assertEquals(127, r.code());
        assertEquals("kolo: cannot start rank 0 (" + crlf + "): " + crlf + ": its #! line names the interpreter"
                + " '/bin/sh\\r', which does not exist: the script has Windows (CRLF) line endings; convert it, e.g."
                + " sed -i 's/\\r$//' " + crlf, r.err().strip());
        Path other = dir.resolve("other.sh");
        Files.writeString(other, "#! /kolo/no/such/python -u\nprint(1)\n");
        other.toFile().setExecutable(true);
        Result o = kolo("run", "-np", "1", "--", other.toString());
        assertEquals(127, o.code());
        assertEquals("kolo: cannot start rank 0 (" + other + "): " + other + ": its #! line names the interpreter"
                + " '/kolo/no/such/python', which does not exist", o.err().strip());
        assertEquals("", o.out());
    }

    @Test
    void aCommandThatCannotStartIsReported() {
        Result r = kolo("run", "-np", "2", "--", "/nonexistent/kolo-test-binary");
        assertEquals(127, r.code());
        assertTrue(r.err().contains("kolo: cannot start rank 0"), r.err());
    }

    /**
     * As with mpirun, rank 0 reads the launcher's stdin and the other ranks read nothing. Before: every rank read
     * /dev/null, so "kolo run -np 1 ./prog < input" silently ran on no input.
     */
    @Test
    void rank0ReadsTheLaunchersStdin(@TempDir Path dir) throws Exception {
        Path input = Files.writeString(dir.resolve("input"), "hello\nworld\n");
        ProcessBuilder pb = new ProcessBuilder(ChildCommand.javaExecutable(), "-cp",
                System.getProperty("java.class.path"), Main.class.getName(), "run", "-np", "2", "--", "sh", "-c",
                "echo \"$KOLO_RANK:$(cat | tr '\\n' ' ')\" ${KOLO_STDIN_FROM:-unset}");
        pb.redirectInput(input.toFile());
        pb.redirectErrorStream(true);
        Process launcher = pb.start();
        String output = new String(launcher.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(launcher.waitFor(30, TimeUnit.SECONDS), output);
        assertEquals(0, launcher.exitValue(), output);
        assertEquals(List.of("[0]<stdout>:0:hello world  unset", "[1]<stdout>:1: unset"),
                output.lines().sorted().toList());

        // Started with stdin closed, the launcher's descriptor 0 is one of the JVM's own files: not rank 0's input.
        List<String> closed = new ArrayList<>(List.of("sh", "-c", "exec \"$0\" \"$@\" <&-"));
        closed.addAll(pb.command());
        Process noStdin = new ProcessBuilder(closed).redirectErrorStream(true).start();
        String none = new String(noStdin.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(noStdin.waitFor(30, TimeUnit.SECONDS), none);
        assertEquals(List.of("[0]<stdout>:0: unset", "[1]<stdout>:1: unset"), none.lines().sorted().toList());
    }

    @Test
    void sigtermToTheLauncherLeavesNoProcessBehind(@TempDir Path dir) throws Exception {
        assertSigtermSaysInterruptedAndLeavesNothing(dir, launcherWithSleepingRanks(dir));
    }

    /** The same for an elastic job: its workers are stopped as the launcher was told, not reported as failed. */
    @Test
    void sigtermToAnElasticLauncherSaysItWasInterruptedAndLeavesNoProcessBehind(@TempDir Path dir) throws Exception {
        String log = assertSigtermSaysInterruptedAndLeavesNothing(dir, launcherWithSleepingRanks(dir, "--min-np", "1"));
        // Before: "kolo: all 3 ranks of job 0 failed: rank 0 ... exited with code 143 (terminated by SIGTERM); ..."
        assertFalse(log.contains("failed"), log);
    }

    /** --report is written however the job ends: here by SIGTERM to the launcher, the view frozen as FAILED. */
    @Test
    void sigtermToTheLauncherStillWritesItsReport(@TempDir Path dir) throws Exception {
        Path report = dir.resolve("job.html");
        assertSigtermSaysInterruptedAndLeavesNothing(dir, launcherWithSleepingRanks(dir, "--report",
                report.toString()));
        com.fasterxml.jackson.databind.JsonNode job = ViewClient.reportJson(report);
        assertEquals("FAILED", job.get("state").asText());
        assertEquals(3, job.get("ranks").size());
        List<String> kinds = new ArrayList<>();
        job.get("events").forEach(e -> kinds.add(e.get("kind").asText()));
        assertTrue(kinds.contains("stop") && kinds.getLast().equals("end"), kinds.toString());
    }

    /** SIGTERM to {@code launcher} of three sleeping ranks: exit 143, "interrupted", every rank gone. Its log. */
    private static String assertSigtermSaysInterruptedAndLeavesNothing(Path dir, Process launcher) throws Exception {
        try {
            launcher.destroy();
            assertTrue(launcher.waitFor(30, TimeUnit.SECONDS));
            assertEquals(143, launcher.exitValue());
            String log = Files.readString(dir.resolve("launcher.log"));
            assertTrue(log.contains("kolo: interrupted; terminating 3 ranks"), log);
            assertAllGone(pidsIn(dir));
            return log;
        } finally {
            launcher.destroyForcibly();
        }
    }

    /**
     * SIGTERM while the launcher still checks the hosts over ssh (a host that does not answer): its ssh clients go with
     * it. Before: they were left running, re-parented to init, until their own timeouts.
     */
    @Test
    void sigtermDuringTheHostCheckLeavesNoSshBehind(@TempDir Path dir) throws Exception {
        Path ssh = sleepingChild(dir, "fake-ssh");
        assertSigtermTakesTheChildAlong(dir, Map.of("KOLO_SSH_COMMAND", ssh.toString()),
                "run", "-H", "kolo-silent-host:1", "--", "true");
    }

    /** The same while an elastic launcher runs its --host-discovery-script: the script goes with it. */
    @Test
    void sigtermDuringHostDiscoveryLeavesNoScriptBehind(@TempDir Path dir) throws Exception {
        Path script = sleepingChild(dir, "discover");
        assertSigtermTakesTheChildAlong(dir, Map.of(), "run", "--min-np", "1", "--host-discovery-script",
                script.toString(), "--", "true");
    }

    /** An executable that writes its pid to {@code dir/child.pid} and sleeps a minute. */
    private static Path sleepingChild(Path dir, String name) throws IOException {
        Path child = dir.resolve(name);
        Path pid = dir.resolve("child.pid");
        Files.writeString(child, "#!/bin/sh\necho $$ > " + pid + ".tmp; mv " + pid + ".tmp " + pid + "; exec sleep 60\n");
        child.toFile().setExecutable(true);
        return child;
    }

    /**
     * Starts a launcher JVM with {@code args}, sends it SIGTERM once the {@link #sleepingChild} it starts is running,
     * and checks that it exits 143 with the child gone.
     */
    private static void assertSigtermTakesTheChildAlong(Path dir, Map<String, String> env, String... args)
            throws Exception {
        Path pid = dir.resolve("child.pid");
        List<String> command = new ArrayList<>(List.of(ChildCommand.javaExecutable(), "-cp",
                System.getProperty("java.class.path"), Main.class.getName()));
        command.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(command);
        pb.environment().putAll(env);
        pb.redirectErrorStream(true).redirectOutput(dir.resolve("launcher.log").toFile());
        Process launcher = pb.start();
        try {
            for (int i = 0; i < 300 && !Files.exists(pid); i++) {
                Thread.sleep(100);
            }
            assertTrue(Files.exists(pid), Files.readString(dir.resolve("launcher.log")));
            launcher.destroy();
            assertTrue(launcher.waitFor(20, TimeUnit.SECONDS));
            assertEquals(143, launcher.exitValue());
            assertAllGone(List.of(Long.parseLong(Files.readString(pid).strip())));
        } finally {
            launcher.destroyForcibly();
            if (Files.exists(pid)) {
                ProcessHandle.of(Long.parseLong(Files.readString(pid).strip())).ifPresent(ProcessHandle::destroyForcibly);
            }
        }
    }

    /** SIGKILL (the OOM killer, a scheduler's hard kill) gives the launcher no chance to act: the ranks still go. */
    @Test
    void sigkillToTheLauncherLeavesNoProcessBehind(@TempDir Path dir) throws Exception {
        Process launcher = launcherWithSleepingRanks(dir);
        launcher.destroyForcibly();
        assertTrue(launcher.waitFor(20, TimeUnit.SECONDS));
        assertEquals(137, launcher.exitValue());
        assertAllGone(pidsIn(dir));
    }

    /** kolo run of three ranks that each start a background sleep, once all six have written their pids. */
    private static Process launcherWithSleepingRanks(Path dir, String... options) throws Exception {
        String script = "sleep 60 & echo $$ $! > " + dir + "/pids.$KOLO_RANK.tmp; "
                + "mv " + dir + "/pids.$KOLO_RANK.tmp " + dir + "/pids.$KOLO_RANK; echo started; wait";
        List<String> argv = new ArrayList<>(List.of(ChildCommand.javaExecutable(), "-cp",
                System.getProperty("java.class.path"), Main.class.getName(), "run", "-np", "3"));
        argv.addAll(List.of(options));
        argv.addAll(List.of("--", "sh", "-c", script));
        ProcessBuilder pb = new ProcessBuilder(argv);
        pb.redirectErrorStream(true);
        pb.redirectOutput(dir.resolve("launcher.log").toFile());
        Process launcher = pb.start();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (pidsIn(dir).size() < 6) {
            if (System.nanoTime() > deadline || !launcher.isAlive()) {
                launcher.destroyForcibly();
                throw new AssertionError("ranks did not start: " + Files.readString(dir.resolve("launcher.log")));
            }
            Thread.sleep(50);
        }
        return launcher;
    }

    private static List<Long> pidsIn(Path dir) throws IOException {
        List<Long> pids = new ArrayList<>();
        try (Stream<Path> files = Files.list(dir)) {
            for (Path f : files.filter(p -> p.getFileName().toString().matches("pids\\.\\d+")).toList()) {
                for (String pid : Files.readString(f).trim().split("\\s+")) {
                    if (!pid.isEmpty()) {
                        pids.add(Long.parseLong(pid));
                    }
                }
            }
        }
        return pids;
    }

    /** Polls briefly: a process killed a moment ago may still be a zombie awaiting its reaper. */
    private static void assertAllGone(List<Long> pids) throws InterruptedException {
        assertFalse(pids.isEmpty());
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        for (long pid : pids) {
            while (ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false)) {
                if (System.nanoTime() > deadline) {
                    ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly);
                    throw new AssertionError("process " + pid + " outlived the job");
                }
                Thread.sleep(20);
            }
        }
    }

    static final class MapStore implements KeyValueStore {
        private final Map<String, String> map = new ConcurrentHashMap<>();

        @Override
        public void put(String key, String value) {
            map.put(key, value);
        }

        @Override
        public boolean putIfAbsent(String key, String value) {
            return map.putIfAbsent(key, value) == null;
        }

        @Override
        public Optional<String> tryGet(String key) {
            return Optional.ofNullable(map.get(key));
        }

        @Override
        public String get(String key, Duration timeout) {
            return map.get(key);
        }

        @Override
        public void close() {
        }
    }
}
