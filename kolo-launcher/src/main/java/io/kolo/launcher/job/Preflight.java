package io.kolo.launcher.job;

import io.kolo.launcher.start.ProcessStopper;
import io.kolo.launcher.start.Ssh;

import io.kolo.bootstrap.RetryDelay;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * Checks every remote host over ssh, all in parallel, before any rank starts, so a typo or a host that is
 * down costs one clear message instead of a job that half starts. Each check also learns the launcher's
 * address as that host sees it (the client address of {@code SSH_CONNECTION}): an address the host can
 * route back to, which is where the ranks find the rendezvous server.
 */
final class Preflight {
    /** A host that passed: the launcher's address as it sees it. */
    record Reachable(String host, String launcherAddress) {
    }

    /** Thrown with one line per host that failed. */
    static final class HostsUnreachable extends Exception {
        private static final long serialVersionUID = 1L;

        HostsUnreachable(String message) {
            super(message);
        }
    }

    private static final String MARK = "kolo-preflight";
    // The ssh clients of checks under way, for stopAll(): a launcher stopped mid-check must not leave them running.
    private static final java.util.Set<Process> RUNNING = java.util.concurrent.ConcurrentHashMap.newKeySet();
    private static final Duration FIRST_BACKOFF = Duration.ofMillis(250);
    private static final Duration MAX_BACKOFF = Duration.ofSeconds(2);

    private Preflight() {
    }

    /**
     * Checks {@code hosts}; retries names that do not resolve yet and hosts that refuse or cannot be routed to
     * (pods still starting) with backoff until {@code timeout}.
     */
    static Map<String, Reachable> check(Ssh ssh, List<String> hosts, String workingDirectory, Duration timeout)
            throws HostsUnreachable, InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        Map<String, Future<Object>> checks = new LinkedHashMap<>();
        try (ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
            for (String host : hosts) {
                checks.put(host, pool.submit(() -> checkOne(ssh, host, workingDirectory, deadline)));
            }
            Map<String, Reachable> ok = new LinkedHashMap<>();
            List<String> failures = new ArrayList<>();
            for (Map.Entry<String, Future<Object>> e : checks.entrySet()) {
                Object result;
                try {
                    result = e.getValue().get();
                } catch (java.util.concurrent.ExecutionException ex) {
                    result = "host " + e.getKey() + ": " + ex.getCause();
                }
                if (result instanceof Reachable r) {
                    ok.put(e.getKey(), r);
                } else {
                    failures.add("kolo: " + result);
                }
            }
            if (!failures.isEmpty()) {
                throw new HostsUnreachable(String.join("\n", failures));
            }
            return ok;
        }
    }

    /** Kills the ssh clients of checks under way (the launcher is stopping: Ctrl-C, SIGTERM). */
    static void stopAll() {
        ProcessStopper.stop(RUNNING.stream().map(Process::toHandle).toList(), java.time.Duration.ofSeconds(1));
    }

    /** A {@link Reachable}, or the one-line reason the host failed. */
    private static Object checkOne(Ssh ssh, String host, String workingDirectory, long deadline)
            throws InterruptedException {
        // Checking the directory here names the real problem (Kolo expects the same paths on every host)
        // before any rank fails on it.
        String probe = "cd " + RankEnvironment.shellQuote(List.of(workingDirectory)) + " || exit 126; echo " + MARK
                + " \"$SSH_CONNECTION\"";
        RetryDelay delay = new RetryDelay(FIRST_BACKOFF, MAX_BACKOFF);
        long started = System.nanoTime();
        // What ssh said last time, for when the last retry is cut short by the deadline: on a slow machine that
        // answer ("Connection refused") says more than "no answer".
        String saidBefore = null;
        while (true) {
            Result r = runSsh(ssh.argv(host, probe), deadline);
            if (r.code == 0) {
                for (String line : r.stdout.split("\n")) {
                    String[] words = line.strip().split("\\s+");
                    if (words.length >= 2 && words[0].equals(MARK)) {
                        return new Reachable(host, words[1]);
                    }
                }
                return "host " + host + ": ssh worked but SSH_CONNECTION was not reported (output: '"
                        + r.stdout.strip() + "')";
            }
            String said = lastLine(r.stderr);
            if (r.code == 126) {
                return "host " + host + ": no directory " + workingDirectory + " there (kolo run starts ranks in"
                        + " the launcher's working directory; Kolo and the program must be at the same path on"
                        + " every host)";
            }
            boolean retryable = r.code == 255 && (said.contains("Could not resolve hostname")
                    || said.contains("Connection refused") || said.contains("No route to host")
                    || said.contains("Network is unreachable") || said.contains("Name or service not known")
                    || said.contains("Temporary failure in name resolution"));
            long now = System.nanoTime();
            if (r.timedOut && saidBefore != null) {
                return "host " + host + " is not reachable over ssh (retried for "
                        + Math.round((now - started) / 1e9) + " s): " + saidBefore;
            }
            if (!retryable || r.timedOut || !delay.fitsBefore(deadline)) {
                String waited = retryable ? " (retried for " + Math.round((now - started) / 1e9) + " s)" : "";
                return "host " + host + " is not reachable over ssh" + waited + ": "
                        + (r.timedOut ? "no answer before the start timeout"
                        : said.isEmpty() ? "ssh exited with code " + r.code : said);
            }
            saidBefore = said;
            delay.sleep(deadline);
        }
    }

    private record Result(int code, String stdout, String stderr, boolean timedOut) {
    }

    private static Result runSsh(List<String> argv, long deadline) throws InterruptedException {
        Process p;
        try {
            p = new ProcessBuilder(argv).redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")))
                    .start();
        } catch (IOException e) {
            return new Result(-1, "", "cannot run " + argv.getFirst() + ": " + e.getMessage(), false);
        }
        RUNNING.add(p);
        p.onExit().thenRun(() -> RUNNING.remove(p));
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        Thread o = Thread.ofVirtual().start(() -> drain(p.getInputStream(), out));
        Thread e = Thread.ofVirtual().start(() -> drain(p.getErrorStream(), err));
        long left = Math.max(1, deadline - System.nanoTime());
        boolean done = p.waitFor(left, TimeUnit.NANOSECONDS);
        if (!done) {
            p.destroyForcibly();
            p.waitFor(5, TimeUnit.SECONDS);
        }
        o.join(Duration.ofSeconds(2));
        e.join(Duration.ofSeconds(2));
        return new Result(done ? p.exitValue() : -1, out.toString(StandardCharsets.UTF_8),
                err.toString(StandardCharsets.UTF_8), !done);
    }

    private static void drain(InputStream in, ByteArrayOutputStream sink) {
        try (in) {
            in.transferTo(sink);
        } catch (IOException ignored) {
            // The process was killed; what arrived is enough for the message.
        }
    }

    private static String lastLine(String text) {
        List<String> lines = text.lines().map(String::strip).filter(l -> !l.isEmpty()).toList();
        return lines.isEmpty() ? "" : lines.getLast();
    }
}
