package io.kolo.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Open MPI's collectives ({@code MPI_Allreduce} and friends) from a small C program compiled with
 * {@code mpicc} on first use, run by {@code mpirun} with one byte-transfer layer: {@code vader} (shared
 * memory) or {@code tcp} (over loopback). {@code pml ob1} makes sure that BTL is what carries the data.
 * Given {@link BenchHosts}, TCP runs on those hosts instead ({@code mpirun --host}), over their interface, and the
 * compiled program must be at the same path there, as Kolo's jars must.
 */
final class OpenMpiPeer implements Peer {
    static final String SOURCE = "mpi_bench.c";
    private static final Duration COMPILE_TIMEOUT = Duration.ofMinutes(2);

    private final String btl;
    private final Map<String, String> env;
    private final BenchCache cache;
    private final Duration timeout;
    /** Null: every rank on this machine. */
    private final BenchHosts hosts;

    OpenMpiPeer(String btl, Map<String, String> env, BenchCache cache, Duration timeout) {
        this(btl, env, cache, timeout, null);
    }

    OpenMpiPeer(String btl, Map<String, String> env, BenchCache cache, Duration timeout, BenchHosts hosts) {
        if (hosts != null && !btl.equals("tcp")) {
            throw new IllegalArgumentException("across hosts Open MPI is measured over tcp only, not " + btl);
        }
        this.btl = btl;
        this.env = env;
        this.cache = cache;
        this.timeout = timeout;
        this.hosts = hosts;
    }

    @Override
    public String name() {
        return "OMPI " + (btl.equals("vader") ? "shm" : btl);
    }

    @Override
    public Series run(Collective collective, ElementType type, int ranks, List<Step> steps) throws InterruptedException {
        Optional<Path> mpirun = PeerProcess.which("mpirun", env.get("PATH"));
        Optional<Path> mpicc = PeerProcess.which("mpicc", env.get("PATH"));
        if (mpirun.isEmpty() || mpicc.isEmpty()) {
            return Series.skipped(name(), "Open MPI not found: no " + (mpirun.isEmpty() ? "mpirun" : "mpicc")
                    + " on PATH (Debian: apt-get install openmpi-bin libopenmpi-dev)");
        }
        if (type.cType() == null) {
            return Series.skipped(name(), "MPI has no standard " + type.id() + " type");
        }
        try {
            Path binary = compile(mpicc.get());
            List<String> cmd = new ArrayList<>(List.of(mpirun.get().toString()));
            cmd.addAll(arguments(ranks));
            cmd.addAll(List.of(binary.toString(), collective.id(), type.cType(), Step.format(steps)));
            return Peer.fromOutput(name(), PeerProcess.run(cmd, env, null, timeout), steps);
        } catch (IOException e) {
            return Series.failed(name(), e.getMessage());
        }
    }

    /** mpirun's options: ranks, placement, the one BTL, and across hosts the interface and the ssh to use. */
    List<String> arguments(int ranks) {
        List<String> args = new ArrayList<>(List.of("--allow-run-as-root", "--oversubscribe", "-np",
                Integer.toString(ranks)));
        if (hosts != null) {
            args.addAll(List.of("--host", hosts.hostList(), "--bind-to", hosts.bindTo()));
        }
        args.addAll(List.of("--mca", "pml", "ob1", "--mca", "btl", "self," + btl));
        if (hosts == null) {
            if (btl.equals("tcp")) {
                args.addAll(List.of("--mca", "btl_tcp_if_include", "lo"));
            }
            return args;
        }
        if (hosts.networkInterface() != null) {
            // Data and mpirun's own control connections over the interface Kolo uses.
            args.addAll(List.of("--mca", "btl_tcp_if_include", hosts.networkInterface(),
                    "--mca", "oob_tcp_if_include", hosts.networkInterface()));
        }
        if (hosts.sshAgent() != null) {
            args.addAll(List.of("--mca", "plm_rsh_agent", hosts.sshAgent()));
        }
        if (!hosts.sshArgs().isEmpty()) {
            args.addAll(List.of("--mca", "plm_rsh_args", String.join(" ", hosts.sshArgs())));
        }
        return args;
    }

    /** Compiles the bundled source once per content hash into the cache. */
    Path compile(Path mpicc) throws IOException, InterruptedException {
        Path source = cache.resource(SOURCE);
        String file = source.getFileName().toString();
        Path binary = source.resolveSibling(file.substring(0, file.length() - 2));
        if (Files.isExecutable(binary)) {
            return binary;
        }
        Path tmp = Files.createTempFile(cache.dir(), "mpi_bench", ".bin");
        PeerProcess.Result r = PeerProcess.run(List.of(mpicc.toString(), "-O2", "-o", tmp.toString(),
                source.toString()), env, null, COMPILE_TIMEOUT);
        if (r.exitCode() != 0) {
            Files.deleteIfExists(tmp);
            throw new IOException("mpicc failed (" + r.exitCode() + "): " + r.stderrTail());
        }
        Files.move(tmp, binary, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        return binary;
    }
}
