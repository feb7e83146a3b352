package io.kolo.launcher.cluster;

import io.kolo.launcher.workers.ElasticCounter;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * One elastic {@code kolo run} of {@link ElasticCounter} in a {@link NetnsCluster}'s launcher namespace, its hosts
 * from a discovery script ({@code cat} of a file the test rewrites) or from {@code -H}; its output read as it comes,
 * each worker's pid and commit log in {@code logs}.
 */
final class ElasticJob {
    static final String CP = System.getProperty("java.class.path");
    private static final String JAVA = Path.of(System.getProperty("java.home"), "bin", "java").toString();

    private final Process process;
    private final Path logs;
    private final Path hosts;
    private final StringBuilder out = new StringBuilder();
    private final StringBuilder err = new StringBuilder();
    private final Thread outReader;
    private final Thread errReader;

    record Result(int code, String out, String err) {
    }

    private ElasticJob(Process process, Path logs, Path hosts) {
        this.process = process;
        this.logs = logs;
        this.hosts = hosts;
        this.outReader = Thread.ofVirtual().start(() -> MultiHostTest.collect(process.getInputStream(), out));
        this.errReader = Thread.ofVirtual().start(() -> MultiHostTest.collect(process.getErrorStream(), err));
    }

    /**
     * Starts the job; {@code discovered} is the discovery script's first output (null: the flags give the hosts),
     * {@code worker} the arguments after the log directory (steps, millis, [fail-at]).
     */
    static ElasticJob start(NetnsCluster cluster, Path dir, String discovered, List<String> flags, String... worker)
            throws IOException {
        Path logs = Files.createDirectories(dir.resolve("logs"));
        Path hosts = dir.resolve("hosts");
        List<String> cmd = new ArrayList<>(List.of(JAVA, "--enable-native-access=ALL-UNNAMED", "-cp", CP,
                "io.kolo.launcher.Main", "run"));
        cmd.addAll(flags);
        if (discovered != null) {
            Files.writeString(hosts, discovered);
            cmd.addAll(List.of("--host-discovery-script", "cat " + hosts));
        }
        cmd.addAll(List.of("--start-timeout", "30", "-cp", CP, ElasticCounter.class.getName(), logs.toString()));
        cmd.addAll(List.of(worker));
        ProcessBuilder pb = new ProcessBuilder(cluster.inLauncherNs(cmd));
        pb.environment().putAll(cluster.launcherEnv());
        pb.redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
        return new ElasticJob(pb.start(), logs, hosts);
    }

    /** What the discovery script prints from now on, replaced at once (a half-written file would drop hosts). */
    void discover(String lines) throws IOException {
        Path next = hosts.resolveSibling("hosts.next");
        Files.writeString(next, lines);
        Files.move(next, hosts, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }

    /** Waits until {@code worker} has committed {@code step}; fails naming the output when the job ends first. */
    void awaitCommit(String worker, int step) throws Exception {
        Path log = logs.resolve("log." + worker);
        for (int i = 0; i < 1200; i++) {
            if (!process.isAlive()) {
                throw new AssertionError("the job ended before " + worker + " committed step " + step + ": "
                        + finish(10));
            }
            if (Files.exists(log) && Files.readAllLines(log).stream().anyMatch(l -> l.startsWith("commit " + step + " "))) {
                return;
            }
            Thread.sleep(50);
        }
        throw new AssertionError(worker + " never committed step " + step + "; " + out + err);
    }

    /** Waits until the launcher's stderr has a line containing {@code text}. */
    void awaitErr(String text, int seconds) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        while (System.nanoTime() - deadline < 0) {
            synchronized (err) {
                if (err.toString().contains(text)) {
                    return;
                }
            }
            Thread.sleep(50);
        }
        throw new AssertionError("the launcher never said '" + text + "' within " + seconds + " s; " + out + err);
    }

    long pid(String worker) throws IOException {
        return Long.parseLong(Files.readString(logs.resolve("pid." + worker)).strip());
    }

    /** The job's end, within {@code seconds}; on a hang the launcher is killed and every worker's log reported. */
    Result finish(int seconds) throws Exception {
        if (!process.waitFor(seconds, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            process.waitFor(10, TimeUnit.SECONDS);
            throw new AssertionError("the job did not end within " + seconds + " s; " + out + err + logs());
        }
        outReader.join(java.time.Duration.ofSeconds(10));
        errReader.join(java.time.Duration.ofSeconds(10));
        synchronized (out) {
            synchronized (err) {
                return new Result(process.exitValue(), out.toString(), err.toString());
            }
        }
    }

    /** Stops the launcher if it still runs (a test that failed half-way). */
    void kill() throws InterruptedException {
        if (process.isAlive()) {
            process.destroyForcibly();
            process.waitFor(10, TimeUnit.SECONDS);
        }
    }

    String logs() throws IOException {
        StringBuilder sb = new StringBuilder();
        try (Stream<Path> files = Files.list(logs)) {
            for (Path f : files.sorted().toList()) {
                sb.append('\n').append(f.getFileName()).append(":\n").append(Files.readString(f, StandardCharsets.UTF_8));
            }
        }
        return sb.toString();
    }

    /** In every worker's log the committed step never decreases, and within one job it rises by one. */
    void assertCommitsNeverGoBack() throws IOException {
        io.kolo.launcher.TestAccess.assertCommitsNeverGoBack(logs);
    }

    /** Lines of a worker's commit log. */
    List<String> log(String worker) throws IOException {
        Path f = logs.resolve("log." + worker);
        return Files.exists(f) ? Files.readAllLines(f) : List.of();
    }
}
