package io.kolo.launcher;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Processes that leave a rank's session and outlive it: a real launcher JVM, started as the {@code kolo} script
 * starts it, and ranks that are shell commands.
 */
@Timeout(60)
@EnabledOnOs(OS.LINUX)
class OrphansTest {

    /**
     * Each rank starts {@code setsid sleep 300} (a session of its own, out of the rank's process group) and exits at
     * once. Before: the sleeps were re-parented to init before the launcher's poll of the ranks' descendants saw them,
     * and outlived kolo run by five minutes. Now the launcher adopts them (a child subreaper) and stops them.
     */
    @Test
    void aProcessThatLeftTheRanksSessionDoesNotOutliveKoloRun(@TempDir Path dir) throws Exception {
        String marker = marker();
        runAndAssertNothingLeft(dir, marker, 30, "run", "-np", "3", "--",
                "sh", "-c", "setsid sleep 300 " + marker + " </dev/null >/dev/null 2>&1 & exit 0");
    }

    /**
     * The same in an elastic run, beside its discovery script: the launcher runs the script every second, a child of
     * its own and no orphan, while an orphan of each worker is its child too. Before: elastic runs were no subreaper
     * (the script would have counted as an orphan), and the sleeps outlived kolo run. Now the launcher tells its own
     * children from adopted ones, stops the sleeps at the end, and the script runs undisturbed.
     */
    @Test
    void aProcessThatLeftAnElasticWorkersSessionDoesNotOutliveKoloRun(@TempDir Path dir) throws Exception {
        String marker = marker();
        Path hosts = dir.resolve("hosts");
        Files.writeString(hosts, "localhost:2\n");
        // The sleep's parent (the subshell) exits at once: it is adopted while the workers and the script run.
        String log = runAndAssertNothingLeft(dir, marker, 40, "run", "-np", "2", "--min-np", "2",
                "--host-discovery-script", "cat " + hosts, "--",
                "sh", "-c", "(setsid sleep 300 " + marker + " </dev/null >/dev/null 2>&1 &); sleep 4; exit 0");
        assertTrue(log.lines().noneMatch(l -> l.contains("--host-discovery-script")), log);
    }

    /** A fraction of a second no other process on the machine sleeps, by which to find the test's sleeps. */
    private static String marker() {
        return "0.000" + ThreadLocalRandom.current().nextInt(100_000_000, 999_999_999);
    }

    /**
     * Runs a real launcher JVM with {@code args} until it exits (at most {@code seconds}) and asserts exit 0 and no
     * process left with {@code marker} among its arguments (stopping any that is); the launcher's output.
     */
    private static String runAndAssertNothingLeft(Path dir, String marker, int seconds, String... args)
            throws Exception {
        try {
            List<String> command = new java.util.ArrayList<>(List.of(ChildCommand.javaExecutable(),
                    ChildCommand.NATIVE_ACCESS, "-cp", System.getProperty("java.class.path"), Main.class.getName()));
            command.addAll(List.of(args));
            ProcessBuilder pb = new ProcessBuilder(command);
            pb.redirectErrorStream(true).redirectOutput(dir.resolve("launcher.log").toFile());
            Process launcher = pb.start();
            try {
                assertTrue(launcher.waitFor(seconds, TimeUnit.SECONDS), "kolo run did not exit");
            } finally {
                launcher.destroyForcibly();
            }
            String log = Files.readString(dir.resolve("launcher.log"));
            assertEquals(0, launcher.exitValue(), log);
            List<ProcessHandle> left = withArgument(marker);
            assertTrue(left.isEmpty(), "left running after kolo run exited: " + left.stream()
                    .map(h -> h.pid() + " " + h.info().commandLine().orElse("?")).toList() + "\n" + log);
            return log;
        } finally {
            withArgument(marker).forEach(ProcessHandle::destroyForcibly);
        }
    }

    private static List<ProcessHandle> withArgument(String marker) {
        return ProcessHandle.allProcesses().filter(ProcessHandle::isAlive)
                .filter(h -> h.info().arguments().map(a -> Arrays.asList(a).contains(marker)).orElse(false))
                .toList();
    }
}
