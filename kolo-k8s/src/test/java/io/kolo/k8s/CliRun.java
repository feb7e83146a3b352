package io.kolo.k8s;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/** {@code kolo k8s ARGS} run in this JVM against a {@link FakeCluster}, on a thread of its own while it follows. */
final class CliRun {
    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();
    private final AtomicReference<Follower> follower = new AtomicReference<>();
    private final CompletableFuture<Integer> code;

    private CliRun(FakeCluster cluster, String stdin, String... args) {
        PrintStream o = new PrintStream(out, true, StandardCharsets.UTF_8);
        PrintStream e = new PrintStream(err, true, StandardCharsets.UTF_8);
        K8sCli cli = new K8sCli(cluster == null ? KubernetesJobs::connect : cluster::jobs,
                new ByteArrayInputStream(stdin.getBytes(StandardCharsets.UTF_8)), o, e, Duration.ofMillis(100),
                follower::set);
        code = CompletableFuture.supplyAsync(() -> cli.run(args));
    }

    static CliRun start(FakeCluster cluster, String... args) {
        return new CliRun(cluster, "", args);
    }

    static CliRun startWithInput(FakeCluster cluster, String stdin, String... args) {
        return new CliRun(cluster, stdin, args);
    }

    /** Runs to the end (30 s at most). */
    static CliRun run(FakeCluster cluster, String... args) throws Exception {
        CliRun r = start(cluster, args);
        r.code();
        return r;
    }

    int code() throws Exception {
        return code.get(30, TimeUnit.SECONDS);
    }

    String out() {
        return out.toString(StandardCharsets.UTF_8);
    }

    String err() {
        return err.toString(StandardCharsets.UTF_8);
    }

    /** Ctrl-C, as the signal handler delivers it. */
    void interrupt() throws InterruptedException {
        for (int i = 0; i < 100 && follower.get() == null; i++) {
            Thread.sleep(50);
        }
        follower.get().interrupt();
    }

    /** Waits until stderr has a line containing {@code text}. */
    void awaitErr(String text) throws InterruptedException {
        for (int i = 0; i < 200; i++) {
            if (err().contains(text)) {
                return;
            }
            Thread.sleep(50);
        }
        throw new AssertionError("no '" + text + "' in:\n" + err() + out());
    }

    @Override
    public String toString() {
        return "stdout:\n" + out() + "stderr:\n" + err();
    }
}
