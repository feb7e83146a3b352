package io.kolo.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * Runs one peer benchmark process (mpirun, python3, mpicc) to completion with a time limit, keeping its
 * stdout lines and the tail of its stderr for the error message when it fails. On timeout the process and
 * everything it started are killed: a stuck peer must not hang {@code kolo bench}.
 */
final class PeerProcess {
    private static final int TAIL_LINES = 8;

    /** {@code stderr}: its last lines. */
    record Result(int exitCode, List<String> stdout, List<String> stderr) {
        /** The last lines of stderr on one line, for a failure's message. */
        String stderrTail() {
            return String.join(" | ", stderr);
        }

        /**
         * The last line of stderr that says something: a Python traceback's own error ("ImportError: ..."), where
         * the whole tail is mostly the frames that led there.
         */
        String lastErrorLine() {
            return stderr.reversed().stream().map(String::strip).filter(l -> !l.isEmpty()).findFirst().orElse("");
        }
    }

    private PeerProcess() {
    }

    static Result run(List<String> command, Map<String, String> env, Path workDir, Duration timeout)
            throws IOException, InterruptedException {
        ProcessBuilder pb = new ProcessBuilder(command);
        pb.environment().putAll(env);
        if (workDir != null) {
            pb.directory(workDir.toFile());
        }
        Process p = pb.start();
        p.getOutputStream().close();
        List<String> out = new ArrayList<>();
        Deque<String> err = new ArrayDeque<>();
        Thread outPump = Thread.ofPlatform().daemon().start(() -> pump(p.getInputStream(), out, Integer.MAX_VALUE));
        Thread errPump = Thread.ofPlatform().daemon().start(() -> pump(p.getErrorStream(), err, TAIL_LINES));
        boolean done;
        try {
            done = p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            kill(p);
            throw e;
        }
        if (!done) {
            kill(p);
            throw new IOException(command.getFirst() + " did not finish within " + timeout.toSeconds() + " s; killed it");
        }
        outPump.join(Duration.ofSeconds(5));
        errPump.join(Duration.ofSeconds(5));
        synchronized (out) {
            synchronized (err) {
                return new Result(p.exitValue(), List.copyOf(out), List.copyOf(err));
            }
        }
    }

    private static void kill(Process p) throws InterruptedException {
        p.descendants().forEach(ProcessHandle::destroyForcibly);
        p.destroyForcibly();
        p.waitFor(5, TimeUnit.SECONDS);
    }

    private static void pump(InputStream in, java.util.Collection<String> sink, int keep) {
        try (BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
            String line;
            while ((line = r.readLine()) != null) {
                synchronized (sink) {
                    sink.add(line);
                    if (sink.size() > keep && sink instanceof Deque<String> d) {
                        d.removeFirst();
                    }
                }
            }
        } catch (IOException e) {
            // The process was killed; what we have is what there is.
        }
    }

    /** The first executable called {@code name} on {@code path} (a PATH value), like a shell finds it. */
    static Optional<Path> which(String name, String path) {
        if (path == null) {
            return Optional.empty();
        }
        for (String dir : path.split(java.io.File.pathSeparator)) {
            if (dir.isEmpty()) {
                continue;
            }
            Path candidate = Path.of(dir, name);
            if (Files.isRegularFile(candidate) && Files.isExecutable(candidate)) {
                return Optional.of(candidate);
            }
        }
        return Optional.empty();
    }
}
