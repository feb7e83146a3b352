package io.kolo.bench;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * Gloo through PyTorch ({@code torch.distributed}, backend {@code gloo}: what Horovod and PyTorch use without
 * MPI), with the system Python ({@code /usr/bin/python3}, Debian {@code python3-torch}). The script starts
 * its own ranks and meets them over loopback TCP. {@code KOLO_BENCH_PYTHON} names another interpreter.
 */
final class GlooPeer implements Peer {
    static final String SCRIPT = "gloo_bench.py";
    static final String DEFAULT_PYTHON = "/usr/bin/python3";
    private static final Duration PROBE_TIMEOUT = Duration.ofSeconds(60);

    private final Path python;
    private final Map<String, String> env;
    private final BenchCache cache;
    private final Duration timeout;

    GlooPeer(Map<String, String> env, BenchCache cache, Duration timeout) {
        String py = env.get("KOLO_BENCH_PYTHON");
        this.python = Path.of(py == null || py.isBlank() ? DEFAULT_PYTHON : py);
        this.env = env;
        this.cache = cache;
        this.timeout = timeout;
    }

    @Override
    public String name() {
        return "Gloo";
    }

    @Override
    public Series run(Collective collective, ElementType type, int ranks, List<Step> steps) throws InterruptedException {
        if (!Files.isExecutable(python)) {
            return Series.skipped(name(), python + " not found (Debian: apt-get install python3-torch)");
        }
        try {
            PeerProcess.Result probe = PeerProcess.run(List.of(python.toString(), "-c",
                    "import torch.distributed as d; assert d.is_available() and d.is_gloo_available(),"
                            + " 'this torch.distributed has no gloo backend'"),
                    env, null, PROBE_TIMEOUT);
            if (probe.exitCode() != 0) {
                return Series.skipped(name(), "PyTorch with gloo is not importable by " + python
                        + " (Debian: apt-get install python3-torch): " + probe.lastErrorLine());
            }
            Path script = cache.resource(SCRIPT);
            List<String> cmd = List.of(python.toString(), script.toString(), Integer.toString(ranks),
                    Integer.toString(freePort()), collective.id(), type.torchType(), Step.format(steps));
            return Peer.fromOutput(name(), PeerProcess.run(cmd, env, null, timeout), steps);
        } catch (IOException e) {
            return Series.failed(name(), e.getMessage());
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }
}
