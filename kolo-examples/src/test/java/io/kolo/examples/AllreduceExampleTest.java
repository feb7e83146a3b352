package io.kolo.examples;

import io.kolo.djl.testing.ProcessJob;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The figures the README's first command prints: the start and the steady state apart. */
class AllreduceExampleTest {

    @Test
    void theFirstOpTheRestOfTheStartAndTheSteadyStateAreReportedApart() {
        long[] nanos = new long[60];
        Arrays.fill(nanos, 2_000_000);
        nanos[0] = 100_000_000;
        Arrays.fill(nanos, 1, 10, 10_000_000);
        // 4 MiB at 2 ranks: each rank moves the whole message once, 4194304 bytes in 2 ms.
        assertEquals("first op 100.0 ms, ops 2-10 10.0 ms avg; steady state (ops 11-60) 2.00 ms avg,"
                + " bus bandwidth 2.10 GB/s", AllreduceExample.timings(nanos, 4 << 20, 2));
    }

    @Test
    void withTenOpsOrFewerItSaysHowToSeeTheSteadyState() {
        assertEquals("first op 5.0 ms, ops 2-3 1.5 ms avg (more than 10 --iterations for the steady state)",
                AllreduceExample.timings(new long[] {5_000_000, 1_000_000, 2_000_000}, 1024, 2));
        assertEquals("first op 5.0 ms (more than 10 --iterations for the steady state)",
                AllreduceExample.timings(new long[] {5_000_000}, 1024, 2));
    }

    @Test
    void oneRankHasNoBusBandwidth() {
        long[] nanos = new long[11];
        Arrays.fill(nanos, 1_000_000);
        assertEquals("first op 1.0 ms, ops 2-10 1.0 ms avg; steady state (ops 11-11) 1.00 ms avg",
                AllreduceExample.timings(nanos, 1024, 1));
    }

    @Test
    void startupPrintsWhenEachPhaseEndedInOrder() {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        PrintStream original = System.out;
        System.setOut(new PrintStream(bytes, true, StandardCharsets.UTF_8));
        try {
            // No KOLO_* variables: a job of one rank, this JVM.
            AllreduceExample.main(new String[] {"--elements", "16", "--iterations", "3", "--startup"});
        } finally {
            System.setOut(original);
        }
        String out = bytes.toString(StandardCharsets.UTF_8);
        Matcher m = Pattern.compile("startup: JVM started at (\\d+) \\(epoch ms\\); main \\+(\\d+) ms, Kolo.init done"
                + " \\+(\\d+) ms, first op done \\+(\\d+) ms, shutdown done \\+(\\d+) ms").matcher(out);
        assertTrue(m.find(), out);
        long started = Long.parseLong(m.group(1));
        assertTrue(started <= System.currentTimeMillis() && started > System.currentTimeMillis() - 3_600_000, out);
        long previous = 0;
        for (int g = 2; g <= 5; g++) {
            long at = Long.parseLong(m.group(g));
            assertTrue(at >= previous, "phase " + g + " ended before the one before it: " + out);
            previous = at;
        }
    }

    @Test
    void badValuesAreOneLineNamingTheFlag(@TempDir Path dir) throws Exception {
        for (String[] bad : new String[][]{{"--elements", "-5"}, {"--iterations", "0"}, {"--elements", "many"}}) {
            ProcessJob.Rank r = ProcessJob.run(1, dir, 60, AllreduceExample.class.getName(), bad).getFirst();
            assertEquals(2, r.exitCode(), ProcessJob.report(dir, 1));
            assertEquals("allreduce: " + bad[0] + " needs a whole number >= 1, not '" + bad[1] + "' (usage: allreduce"
                    + " [--elements N] [--iterations N] [--startup])", r.err().strip());
        }
    }
}
