package io.kolo.launcher;

import io.kolo.launcher.start.WorkerStart;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What a static job did and an elastic job or a node of an {@code --nnodes} job did not, now that all three run under
 * one supervisor and start workers through one {@link WorkerStart}: the plan's warnings, --verbose, --output-dir,
 * --timestamp-output, stopping when the output is closed, and an ssh failure only where ssh started the worker.
 */
@Timeout(60)
class RuntimesAgreeTest {
    private static final String STAMPED = "\\w{3} \\w{3} [ \\d]\\d \\d{2}:\\d{2}:\\d{2} \\d{4}";

    /** Before: an elastic run wrote no DIR/rank.N files and printed no timestamps, silently. */
    @Test
    void anElasticRunWritesTheOutputDirAndTimestampsItsLines(@TempDir Path dir) throws IOException {
        Path logs = dir.resolve("logs");
        LauncherProcessTest.Result r = LauncherProcessTest.kolo("run", "-np", "2", "--min-np", "1", "-H",
                "localhost:2", "--output-dir", logs.toString(), "--timestamp-output", "--", "sh", "-c",
                "echo out $KOLO_RANK");
        assertEquals(0, r.code(), r.err());
        for (int rank = 0; rank < 2; rank++) {
            assertEquals(List.of("out " + rank), Files.readAllLines(logs.resolve("rank." + rank + "/stdout")));
        }
        List<String> lines = r.out().lines().sorted().toList();
        assertEquals(2, lines.size(), r.out());
        for (String line : lines) {
            assertTrue(line.matches(STAMPED + "\\[[01]]<stdout>:out [01]"), line);
        }
    }

    /** Before: an elastic run dropped the plan's warnings (here: -x of a variable the launcher does not have). */
    @Test
    void anElasticRunSaysThePlansWarnings() {
        LauncherProcessTest.Result r = LauncherProcessTest.kolo("run", "-np", "1", "--min-np", "1", "-x",
                "KOLO_TEST_NEVER_SET_ANYWHERE", "--", "true");
        assertEquals(0, r.code(), r.err());
        assertTrue(r.err().contains("kolo: -x KOLO_TEST_NEVER_SET_ANYWHERE: not set in the launcher's environment;"
                + " not forwarded"), r.err());
    }

    /** Before: an elastic run accepted --display-map and printed no map. */
    @Test
    void anElasticRunPrintsTheMapOfItsJob() {
        LauncherProcessTest.Result r = LauncherProcessTest.kolo("run", "-np", "2", "--min-np", "1", "-H",
                "localhost:2", "--display-map", "--", "true");
        assertEquals(0, r.code(), r.err());
        assertTrue(r.err().contains("kolo: map of 2 ranks:\nkolo:   host localhost: ranks 0,1\n"
                + "kolo:   rank 0 on localhost: local rank 0 of 2, cross rank 0 of 1\n"
                + "kolo:   rank 1 on localhost: local rank 1 of 2, cross rank 0 of 1"), r.err());
    }

    /** Before: an elastic run printed no worker's command line and variables under --verbose. */
    @Test
    void anElasticRunSaysEachWorkersCommandAndVariablesUnderVerbose() {
        LauncherProcessTest.Result r = LauncherProcessTest.kolo("run", "-np", "1", "--min-np", "1", "--verbose", "--",
                "true");
        assertEquals(0, r.code(), r.err());
        assertTrue(r.err().contains("kolo: rank 0: true\nkolo: rank 0 env: "), r.err());
        assertTrue(r.err().contains(" KOLO_RANK=0"), r.err());
        assertFalse(r.err().contains("KOLO_SECRET"), r.err());
    }

    /** Before: an elastic worker on the launcher's own host that exited with 255 "lost its ssh connection". */
    @Test
    void anElasticWorkerOnThisHostExitingWith255IsNotAnSshFailure() {
        LauncherProcessTest.Result r = LauncherProcessTest.kolo("run", "-np", "2", "--min-np", "2", "-H",
                "localhost:2", "--reset-limit", "0", "--", "sh", "-c",
                "if [ $KOLO_RANK = 1 ]; then exit 255; fi; sleep 30");
        assertEquals(255, r.code(), r.err());
        assertTrue(r.err().contains("kolo: rank 1 on host localhost exited with code 255"), r.err());
        assertFalse(r.err().contains("ssh"), r.err());
    }

    /** Before: a node of an --nnodes job printed no timestamps with --timestamp-output, silently. */
    @Test
    void aNodeOfAMultiNodeJobTimestampsItsLines() throws IOException {
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        LauncherProcessTest.Result r = LauncherProcessTest.kolo("run", "--nnodes", "1", "--node-rank", "0",
                "--rendezvous", "127.0.0.1:" + port, "--timestamp-output", "--", "sh", "-c", "echo hi");
        assertEquals(0, r.code(), r.err());
        assertTrue(r.out().strip().matches(STAMPED + "\\[0]<stdout>:hi"), r.out());
    }

    /** Before: a node of an --nnodes job accepted --display-map and printed no map. */
    @Test
    void aNodeOfAMultiNodeJobPrintsItsPartOfTheMap() throws IOException {
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        LauncherProcessTest.Result r = LauncherProcessTest.kolo("run", "--nnodes", "1", "--node-rank", "0",
                "--rendezvous", "127.0.0.1:" + port, "--np-per-node", "2", "--display-map", "--", "true");
        assertEquals(0, r.code(), r.err());
        assertTrue(r.err().contains("kolo: node 0 of 1 runs ranks 0-1 of 2\nkolo: map of 2 ranks:\n"), r.err());
        assertTrue(r.err().contains("kolo:   rank 1 on "), r.err());
    }

    /** Before: an elastic job ran on with its output going nowhere (here: past the test's timeout). */
    @Test
    void aClosedStdoutStopsAnElasticJob() {
        AtomicInteger lines = new AtomicInteger();
        OutputStream head = new OutputStream() {
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
            code = Main.run(new String[] {"run", "-np", "2", "--min-np", "1", "-H", "localhost:2", "--", "sh", "-c",
                    "end=$(($(date +%s) + 600)); while [ $(date +%s) -lt $end ]; do echo line; done"}, o, e);
        }
        String errors = err.toString(StandardCharsets.UTF_8);
        assertEquals(141, code, errors);
        assertTrue(errors.lines().anyMatch(l -> l.matches("kolo: the output was closed \\(broken pipe\\); terminating"
                + " (1 rank|2 ranks)")), errors);
    }
}
