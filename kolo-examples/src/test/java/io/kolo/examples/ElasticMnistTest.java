package io.kolo.examples;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code mnist --elastic} under the real launcher ({@code kolo run}, a process of its own) with a discovery script
 * whose output the test changes: three ranks on hosts 127.0.0.1 (two slots) and 127.0.0.2; the worker on 127.0.0.2 is
 * SIGKILLed mid-epoch (its host is blacklisted: two ranks go on from the last commit); host 127.0.0.3 is added (three
 * ranks again, at the next commit); its worker is SIGKILLed too (two ranks finish). The job must end with 0, every
 * reset printed by the launcher, the held-out accuracy at least 95 % and the parameters identical on every rank.
 */
@Timeout(300)
class ElasticMnistTest {
    /** One deadline for every wait of the test. */
    private static final long WAIT_SECONDS = 180;

    @Test
    void losingWorkersAndGainingOneMidTrainingStillReachesNinetyFivePercent(@TempDir Path dir) throws Exception {
        Path data = MnistExampleTest.mnistDir();
        Assumptions.assumeTrue(Files.exists(data.resolve(MnistData.TEST_IMAGES)),
                "skipped: no MNIST t10k files in " + data + " (set -Dkolo.mnist=DIR)");
        Assumptions.assumeTrue(Files.isDirectory(Path.of("/proc/self")),
                "skipped: finding a worker's process by its environment needs Linux's /proc");
        Path hosts = dir.resolve("hosts");
        Files.writeString(hosts, "127.0.0.1:2\n127.0.0.2:1\n");
        Path out = dir.resolve("launcher.out");
        Path err = dir.resolve("launcher.err");
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        String cp = System.getProperty("java.class.path");
        List<String> command = List.of(java, "--enable-native-access=ALL-UNNAMED", "-cp", cp,
                "io.kolo.launcher.Main", "run", "-np", "3", "--min-np", "2", "--max-np", "3",
                "--host-discovery-script", "cat " + hosts, "--reset-limit", "5", "--start-timeout", "90",
                "--elastic-timeout", "60", "-cp", cp, MnistExample.class.getName(), "--data", data.toString(),
                "--elastic", "--epochs", "3", "--batch-size", "32", "--commit-every", "10", "--threads", "1");
        Process launcher = new ProcessBuilder(command).redirectOutput(out.toFile()).redirectError(err.toFile()).start();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
        Set<Long> workers = new HashSet<>();
        try {
            await(launcher, out, err, deadline, s -> s.contains("[0]<stdout>:epoch 1, batch 20: committed on 3 ranks"));
            kill(launcher, "127.0.0.2", workers);
            await(launcher, out, err, deadline, s -> s.contains("committed on 2 ranks"));
            Files.writeString(hosts, "127.0.0.1:2\n127.0.0.3:1\n");
            await(launcher, out, err, deadline, s -> s.indexOf("committed on 3 ranks", s.indexOf("on 2 ranks")) > 0);
            kill(launcher, "127.0.0.3", workers);
            if (!launcher.waitFor(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS)) {
                throw new AssertionError("the job did not end in time:\n" + report(out, err));
            }
        } finally {
            launcher.descendants().forEach(ProcessHandle::destroyForcibly);
            launcher.destroyForcibly();
        }
        String all = report(out, err);
        // The account of the run, for the test's report: the launcher's lines and rank 0's.
        Files.readAllLines(err).stream().filter(l -> l.startsWith("kolo: ")).forEach(System.out::println);
        Files.readAllLines(out).stream().filter(l -> l.startsWith("[0]<stdout>:")).forEach(System.out::println);
        assertEquals(0, launcher.exitValue(), all);
        List<String> stderr = Files.readAllLines(err);
        assertTrue(stderr.stream().anyMatch(l -> l.startsWith("kolo: reset 1") && l.contains("on host 127.0.0.2 exited"
                + " with code 137 (killed by SIGKILL") && l.contains("job 1 has 2 ranks (127.0.0.1:2)")), all);
        assertTrue(stderr.stream().anyMatch(l -> l.startsWith("kolo: reset 2") && l.contains("host 127.0.0.3 added")
                && l.contains("job 2 has 3 ranks (127.0.0.1:2,127.0.0.3:1)")), all);
        assertTrue(stderr.stream().anyMatch(l -> l.startsWith("kolo: reset 3") && l.contains("on host 127.0.0.3 exited"
                + " with code 137 (killed by SIGKILL") && l.contains("job 3 has 2 ranks (127.0.0.1:2)")), all);

        List<String> rank0 = Files.readAllLines(out).stream().filter(l -> l.startsWith("[0]<stdout>:"))
                .map(l -> l.substring("[0]<stdout>:".length())).toList();
        // Each job after a reset goes on from the last commit, not from the epoch's start.
        List<String> starts = rank0.stream().filter(l -> l.startsWith("training on ")).toList();
        assertEquals(4, starts.size(), all);
        assertEquals("training on 3 ranks from epoch 1, batch 0 (0 samples of the epoch already trained)",
                starts.getFirst(), all);
        assertTrue(starts.get(1).matches("training on 2 ranks from epoch \\d, batch [1-9]\\d*0 \\(\\d+ samples .*"),
                all);
        assertTrue(starts.get(2).startsWith("training on 3 ranks from epoch "), all);
        assertTrue(starts.get(3).startsWith("training on 2 ranks from epoch "), all);
        assertEquals(3, rank0.stream().filter(l -> l.matches("epoch \\d: loss [0-9.]+, test accuracy .*")).count(),
                all);
        assertTrue(rank0.get(rank0.size() - 2).matches(
                "parameters identical on all 2 ranks \\(checksum [0-9a-f]{16}\\)"), all);
        Matcher m = Pattern.compile("final test accuracy ([0-9.]+)%").matcher(rank0.getLast());
        assertTrue(m.matches(), all);
        double accuracy = Double.parseDouble(m.group(1));
        assertTrue(accuracy >= 95.0, "elastic MNIST reached only " + accuracy + "%:\n" + all);
        for (long pid : workers) {
            assertFalse(ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false), "worker " + pid + " left");
        }
    }

    /**
     * Rank 0 SIGKILLed after a commit on fixed hosts: the launcher starts its slot again, the new worker gets the
     * committed parameters, Adam's moments and update counts and the position from the survivor (now rank 0), and the
     * job ends with the parameters of the same job run without a failure, bit for bit (two ranks sum in one order).
     * Before the optimizer state was committed, every reset started Adam again and the two runs differed.
     */
    @Test
    void rankZeroKilledAfterACommitLeavesTheResultOfARunWithoutFailure(@TempDir Path dir) throws Exception {
        Path data = MnistExampleTest.mnistDir();
        Assumptions.assumeTrue(Files.exists(data.resolve(MnistData.TEST_IMAGES)),
                "skipped: no MNIST t10k files in " + data + " (set -Dkolo.mnist=DIR)");
        Assumptions.assumeTrue(Files.isDirectory(Path.of("/proc/self")),
                "skipped: finding a worker's process by its environment needs Linux's /proc");
        Run uninterrupted = runTwoRanks(dir.resolve("uninterrupted"), false);
        Run reset = runTwoRanks(dir.resolve("reset"), true);
        List<String> starts = reset.rank0().stream().filter(l -> l.startsWith("training on ")).toList();
        assertEquals(2, starts.size(), reset.all());
        assertTrue(starts.get(1).matches("training on 2 ranks from epoch 1, batch [1-9]\\d*0 \\(\\d+ samples .*"),
                reset.all());
        String checksum = uninterrupted.rank0().get(uninterrupted.rank0().size() - 2);
        assertTrue(checksum.matches("parameters identical on all 2 ranks \\(checksum [0-9a-f]{16}\\)"),
                uninterrupted.all());
        assertEquals(checksum, reset.rank0().get(reset.rank0().size() - 2),
                "the run with a reset ends with other parameters:\n" + uninterrupted.all() + "\n" + reset.all());
    }

    private record Run(List<String> rank0, String all) {
    }

    /** One epoch of the MLP on two ranks of fixed hosts; with {@code kill}, rank 0 is killed after the commit at 20. */
    private static Run runTwoRanks(Path dir, boolean kill) throws Exception {
        Files.createDirectories(dir);
        Path out = dir.resolve("launcher.out");
        Path err = dir.resolve("launcher.err");
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        String cp = System.getProperty("java.class.path");
        List<String> command = List.of(java, "--enable-native-access=ALL-UNNAMED", "-cp", cp,
                "io.kolo.launcher.Main", "run", "-np", "2", "--min-np", "2", "--max-np", "2", "-H", "localhost:2",
                "--reset-limit", "2", "--start-timeout", "90", "--elastic-timeout", "60", "-cp", cp,
                MnistExample.class.getName(), "--data", MnistExampleTest.mnistDir().toString(), "--elastic",
                "--model", "mlp", "--epochs", "1", "--batch-size", "32", "--commit-every", "10", "--threads", "1",
                "--seed", "7");
        Process launcher = new ProcessBuilder(command).redirectOutput(out.toFile()).redirectError(err.toFile()).start();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
        try {
            if (kill) {
                await(launcher, out, err, deadline, s -> s.contains("<stdout>:epoch 1, batch 20: committed on 2"));
                killFirstWorker(launcher);
            }
            if (!launcher.waitFor(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS)) {
                throw new AssertionError("the job did not end in time:\n" + report(out, err));
            }
        } finally {
            launcher.descendants().forEach(ProcessHandle::destroyForcibly);
            launcher.destroyForcibly();
        }
        String all = report(out, err);
        assertEquals(0, launcher.exitValue(), all);
        // Rank 0 is lost: the survivor becomes rank 0 and hands its commit to the new worker.
        assertEquals(kill, Files.readAllLines(err).stream().anyMatch(l -> l.startsWith("kolo: reset 1")
                && l.contains("rank 0 on host localhost exited with code 137 (killed by SIGKILL")), all);
        // Only rank 0 prints; after a reset rank 0 may be another worker (the prefix names the worker's slot).
        return new Run(Files.readAllLines(out).stream().filter(l -> l.matches("\\[\\d+\\]<stdout>:.*"))
                .map(l -> l.substring(l.indexOf(':') + 1)).toList(), all);
    }

    /** SIGKILLs the launcher's first worker, w0 (rank 0 of the first job). */
    private static void killFirstWorker(Process launcher) {
        for (ProcessHandle p : launcher.descendants().toList()) {
            Optional<String> env = environment(p.pid());
            if (env.isPresent() && env.get().contains("\0KOLO_ELASTIC_WORKER=w0\0")) {
                p.destroyForcibly();
                return;
            }
        }
        throw new AssertionError("no worker w0 of the launcher to kill");
    }

    /** Waits until the launcher's output so far satisfies {@code done}; fails if the job ends or time runs out. */
    private static void await(Process launcher, Path out, Path err, long deadline, Predicate<String> done)
            throws Exception {
        while (System.nanoTime() - deadline < 0) {
            if (done.test(Files.readString(out))) {
                return;
            }
            if (!launcher.isAlive()) {
                throw new AssertionError("the job ended (code " + launcher.exitValue() + ") before the test's next"
                        + " step:\n" + report(out, err));
            }
            Thread.sleep(100);
        }
        throw new AssertionError("the job did not get to the test's next step in time:\n" + report(out, err));
    }

    /** SIGKILLs the worker the launcher started on {@code host}: the JVM whose environment names that host. */
    private static void kill(Process launcher, String host, Set<Long> seen) throws IOException {
        List<ProcessHandle> onHost = new ArrayList<>();
        for (ProcessHandle p : launcher.descendants().toList()) {
            Optional<String> env = environment(p.pid());
            if (env.isPresent() && env.get().contains("\0KOLO_ELASTIC_WORKER=")) {
                seen.add(p.pid());
                if (env.get().contains("\0KOLO_HOSTNAME=" + host + "\0")) {
                    onHost.add(p);
                }
            }
        }
        assertEquals(1, onHost.size(), "workers on " + host + ": " + onHost);
        onHost.getFirst().destroyForcibly();   // SIGKILL: no shutdown hook, no last words
    }

    private static Optional<String> environment(long pid) {
        try {
            return Optional.of("\0" + new String(Files.readAllBytes(Path.of("/proc", Long.toString(pid), "environ")),
                    StandardCharsets.UTF_8));
        } catch (IOException e) {
            return Optional.empty();   // gone already, or not ours to read
        }
    }

    private static String report(Path out, Path err) throws IOException {
        return "--- launcher stdout\n" + Files.readString(out) + "--- launcher stderr\n" + Files.readString(err);
    }
}
