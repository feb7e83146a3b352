package io.kolo.examples;

import io.kolo.Kolo;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * PyTorch DDP (gloo, CPU) training the same model beside the Kolo ranks, for {@code synthetic --compare}. Rank 0
 * starts {@code ddp_synthetic.py} with the system Python ({@code /usr/bin/python3}, Debian {@code python3-torch};
 * {@code KOLO_BENCH_PYTHON} names another, as for {@code kolo bench}); the script starts as many DDP ranks as the
 * job has. The two sides take turns through files in a directory (the gate): every Kolo rank waits, sleeping, for
 * DDP's turn to end, so that DDP's ranks run on an otherwise quiet machine and the Kolo ranks run while DDP's sleep.
 * Files rather than a Kolo collective: a Kolo rank blocked in a collective for a whole DDP turn would trip the stall
 * warning, and its training thread drives the engine while it waits.
 */
final class DdpPeer implements AutoCloseable {
    static final String HINT = "install python3-torch or set KOLO_BENCH_PYTHON";
    static final String DEFAULT_PYTHON = "/usr/bin/python3";
    private static final String SCRIPT = "ddp_synthetic.py";
    private static final Duration PROBE_TIMEOUT = Duration.ofSeconds(60);
    /** Two interpreters importing torch and building the model, on a machine that may be busy. */
    private static final Duration READY_TIMEOUT = Duration.ofSeconds(300);
    /** One DDP turn: a few batches at np=1 and at np=N. */
    private static final Duration TURN_TIMEOUT = Duration.ofSeconds(900);
    /** How long the script waits for its next turn: Kolo's turn is three runs of the same batches. */
    private static final Duration SCRIPT_WAIT = Duration.ofSeconds(3600);
    private static final long POLL_MILLIS = 5;

    /** What rank 0 of DDP reported at start: the model it trains. */
    record Ready(long parameters, List<String> shapes, String torchVersion) {
    }

    /**
     * One DDP turn: img/sec of rank 0 alone (np=1), the total over all ranks (np=N), and rank 0's mean times per
     * step of the forward pass, the backward pass (DDP's allreduce runs inside it) and the optimizer step.
     */
    record Turn(double np1, double total, double forwardMs, double backwardMs, double stepMs, double np1ForwardMs,
                double np1BackwardMs, double np1StepMs) {
    }

    private final Path gate;
    private final Process process;
    private Ready ready;
    private int turn;
    private String failure;

    private DdpPeer(Path gate, Process process) {
        this.gate = gate;
        this.process = process;
    }

    /**
     * Starts DDP on rank 0 and waits on every rank until it has built its model; called by every rank. When DDP
     * cannot run (no torch, ranks on several hosts, the script failed to start) rank 0 prints one line why, and the
     * peer returned has {@link #failure()} set and takes no turns: the Kolo benchmark then runs alone.
     */
    static DdpPeer start(SyntheticExample.Settings s, int threads) {
        String decision = null;
        Process process = null;
        if (Kolo.rank() == 0) {
            try {
                String why = Kolo.localSize() != Kolo.size() ? "--compare needs all ranks on one host" : probe(python());
                if (why == null) {
                    Path gate = Files.createTempDirectory("kolo-ddp-");
                    process = launch(gate, s, threads);
                    decision = "gate:" + gate;
                } else {
                    decision = "skip:" + why;
                }
            } catch (IOException e) {
                decision = "skip:could not start " + SCRIPT + ": " + e.getMessage() + "; " + HINT;
            }
        }
        decision = Kolo.broadcastObject(decision, 0);
        DdpPeer peer = new DdpPeer(decision.startsWith("gate:") ? Path.of(decision.substring(5)) : null, process);
        if (peer.gate == null) {
            peer.failure = decision.substring(5);
        } else {
            String readyLine = peer.await("ready", READY_TIMEOUT);
            if (readyLine != null) {
                peer.ready = parseReady(readyLine);
                return peer;
            }
            peer.close();
        }
        if (Kolo.rank() == 0) {
            System.err.println("synthetic: PyTorch DDP skipped: " + peer.failure);
        }
        return peer;
    }

    /** {@code KOLO_BENCH_PYTHON}, else {@code /usr/bin/python3}. */
    static Path python() {
        String py = System.getenv("KOLO_BENCH_PYTHON");
        return Path.of(py == null || py.isBlank() ? DEFAULT_PYTHON : py);
    }

    /** Null when {@code python} can run DDP over gloo; else why not, ending with what to do. */
    static String probe(Path python) {
        if (!Files.isExecutable(python)) {
            return python + " not found; " + HINT;
        }
        try {
            Process p = new ProcessBuilder(python.toString(), "-c",
                    "import torch.distributed as d; assert d.is_available() and d.is_gloo_available()")
                    .redirectErrorStream(true).start();
            p.getOutputStream().close();
            if (!p.waitFor(PROBE_TIMEOUT.toSeconds(), TimeUnit.SECONDS)) {
                p.destroyForcibly();
                return python + " did not import torch within " + PROBE_TIMEOUT.toSeconds() + " s; " + HINT;
            }
            String out = new String(p.getInputStream().readAllBytes()).strip();
            if (p.exitValue() != 0) {
                String last = out.isEmpty() ? "exit code " + p.exitValue() : out.lines().reduce((a, b) -> b).orElse("");
                return python + " cannot run torch.distributed with gloo (" + last + "); " + HINT;
            }
            return null;
        } catch (IOException e) {
            return python + " could not be started (" + e.getMessage() + "); " + HINT;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "interrupted while probing " + python;
        }
    }

    private static Process launch(Path gate, SyntheticExample.Settings s, int threads) throws IOException {
        Path script = gate.resolve(SCRIPT);
        try (InputStream in = DdpPeer.class.getResourceAsStream(SCRIPT)) {
            if (in == null) {
                throw new IOException(SCRIPT + " is missing from the examples jar");
            }
            Files.copy(in, script, StandardCopyOption.REPLACE_EXISTING);
        }
        int port;
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = socket.getLocalPort();
        }
        List<String> cmd = List.of(python().toString(), script.toString(), gate.toString(), Integer.toString(port),
                Integer.toString(Kolo.size()), s.model(), Integer.toString(s.batchSize()),
                Integer.toString(s.imageSize()), Integer.toString(s.warmup()), Integer.toString(s.batchesPerIter()),
                Integer.toString(s.iters()), Integer.toString(threads), Long.toString(SCRIPT_WAIT.toSeconds()),
                Long.toString(ProcessHandle.current().pid()));
        return new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(gate.resolve("ddp.log").toFile())
                .start();
    }

    Ready ready() {
        return ready;
    }

    /**
     * DDP's next turn (the first is its warm-up); every rank waits for it to end. Returns the turn's figures on rank
     * 0, null on the other ranks, and null everywhere (rank 0 having printed why) once DDP has failed.
     */
    Turn takeTurn() {
        if (failure != null) {
            return null;
        }
        int k = turn++;
        if (Kolo.rank() == 0) {
            write("go-" + k, "");
        }
        String done = await("done-" + k, TURN_TIMEOUT);
        if (done == null) {
            if (Kolo.rank() == 0) {
                System.err.println("synthetic: PyTorch DDP stopped: " + failure);
            }
            return null;
        }
        return Kolo.rank() == 0 ? parseTurn(done) : null;
    }

    /** Why DDP did not run or stopped; null while it runs. */
    String failure() {
        return failure;
    }

    /**
     * The content of {@code name} once it appears, or null once DDP failed: rank 0 decides that (the script
     * exited, or the time ran out) and writes the reason to {@code failed}, which the other ranks also watch; they
     * allow a minute more than rank 0 before giving up on their own.
     */
    private String await(String name, Duration timeout) {
        Path file = gate.resolve(name);
        Path failed = gate.resolve("failed");
        long limit = timeout.toNanos() + (Kolo.rank() == 0 ? 0 : TimeUnit.MINUTES.toNanos(1));
        long deadline = System.nanoTime() + limit;
        try {
            while (true) {
                if (Files.exists(file)) {
                    return Files.readString(file).strip();
                }
                if (Files.exists(failed)) {
                    failure = Files.readString(failed).strip();
                    return null;
                }
                boolean late = System.nanoTime() - deadline > 0;
                if (Kolo.rank() == 0 && (late || !process.isAlive())) {
                    // The script writes the file before it can exit: look once more before calling it dead.
                    if (Files.exists(file)) {
                        continue;
                    }
                    failure = late ? "no " + name + " from " + SCRIPT + " within " + timeout.toSeconds() + " s (log: "
                            + gate.resolve("ddp.log") + ")" : SCRIPT + " exited with code " + process.exitValue()
                            + ": " + logTail();
                    write("failed", failure);
                    return null;
                }
                if (late) {
                    failure = "rank 0 said nothing about " + name + " within " + limit / 1_000_000_000 + " s";
                    return null;
                }
                Thread.sleep(POLL_MILLIS);
            }
        } catch (IOException e) {
            failure = "reading " + file + ": " + e.getMessage();
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            failure = "interrupted while waiting for " + name;
            return null;
        }
    }

    private String logTail() {
        try {
            List<String> lines = Files.readAllLines(gate.resolve("ddp.log"));
            for (int i = lines.size() - 1; i >= 0; i--) {
                if (!lines.get(i).isBlank()) {
                    return lines.get(i).strip() + " (log: " + gate.resolve("ddp.log") + ")";
                }
            }
            return "no output";
        } catch (IOException e) {
            return "no log (" + e.getMessage() + ")";
        }
    }

    private void write(String name, String content) {
        try {
            Path tmp = gate.resolve(name + ".tmp");
            Files.writeString(tmp, content);
            Files.move(tmp, gate.resolve(name), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (IOException e) {
            throw new UncheckedIOException("writing the DDP gate file " + name, e);
        }
    }

    /** Rank 0 stops the script (waiting a little, then killing its ranks) and removes the gate unless DDP failed. */
    @Override
    public void close() {
        if (process == null) {
            return;
        }
        try {
            write("stop", "");
            if (!process.waitFor(30, TimeUnit.SECONDS)) {
                System.err.println("synthetic: " + SCRIPT + " did not stop within 30 s; killing it");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (UncheckedIOException ignored) {
            // the gate is gone: kill below
        } finally {
            process.descendants().forEach(ProcessHandle::destroyForcibly);
            process.destroyForcibly();
        }
        if (failure == null) {
            try (Stream<Path> files = Files.walk(gate)) {
                for (Path p : files.sorted(Comparator.reverseOrder()).toList()) {
                    Files.deleteIfExists(p);
                }
            } catch (IOException ignored) {
                // a leftover temporary directory is harmless
            }
        }
    }

    static Ready parseReady(String line) {
        Map<String, String> v = fields(line);
        String shapes = v.getOrDefault("shapes", "");
        return new Ready(Long.parseLong(v.get("params")), shapes.isEmpty() ? List.of() : Arrays.asList(shapes.split(",")),
                v.getOrDefault("torch", "?"));
    }

    static Turn parseTurn(String line) {
        Map<String, String> v = fields(line);
        return new Turn(d(v, "np1"), d(v, "total"), d(v, "forward_ms"), d(v, "backward_ms"), d(v, "step_ms"),
                d(v, "np1_forward_ms"), d(v, "np1_backward_ms"), d(v, "np1_step_ms"));
    }

    private static double d(Map<String, String> v, String key) {
        String s = v.get(key);
        if (s == null) {
            throw new IllegalStateException(SCRIPT + " reported no " + key + ": " + v);
        }
        return Double.parseDouble(s);
    }

    private static Map<String, String> fields(String line) {
        Map<String, String> v = new HashMap<>();
        for (String f : line.strip().split("\\s+")) {
            int eq = f.indexOf('=');
            if (eq > 0) {
                v.put(f.substring(0, eq), f.substring(eq + 1));
            }
        }
        return v;
    }
}
