package io.kolo.bench;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** The real peers on tiny sizes, when installed (Debian openmpi-bin libopenmpi-dev, python3-torch). */
class PeersTest {
    @TempDir
    Path cacheHome;

    private final List<Step> steps = Step.plan(new long[] {1024, 65536}, 3, 1);

    private Map<String, String> env() {
        Map<String, String> env = new HashMap<>(System.getenv());
        env.put("XDG_CACHE_HOME", cacheHome.toString());
        return env;
    }

    @Test
    void openMpiOverSharedMemoryAndTcp() throws Exception {
        boolean installed = PeerProcess.which("mpirun", System.getenv("PATH")).isPresent()
                && PeerProcess.which("mpicc", System.getenv("PATH")).isPresent();
        if (!installed) {
            System.out.println("PeersTest: skipping Open MPI: no mpirun/mpicc on PATH (apt-get install openmpi-bin libopenmpi-dev)");
        }
        assumeTrue(installed, "Open MPI (mpirun, mpicc) not installed");
        BenchCache cache = BenchCache.fromEnvironment(env());
        for (String btl : List.of("vader", "tcp")) {
            // Every collective over shared memory; TCP only differs in the transport, so one is enough there.
            for (Collective c : btl.equals("tcp") ? List.of(Collective.ALLREDUCE) : List.of(Collective.values())) {
                Series s = new OpenMpiPeer(btl, env(), cache, Duration.ofMinutes(2)).run(c, ElementType.F32, 2, steps);
                assertEquals(Series.Status.OK, s.status(), btl + " " + c.id() + ": " + s.reason());
                assertEquals(List.of(1024L, 65536L), s.measurements().stream().map(Measurement::bytes).toList());
                assertTrue(s.measurements().stream().allMatch(m -> m.iterations() == 3 && m.minSeconds() > 0));
            }
        }
        assertTrue(Files.list(cache.dir()).anyMatch(p -> p.getFileName().toString().matches("mpi_bench-[0-9a-f]{12}")),
                "compiled once into the cache");
        Series bf16 = new OpenMpiPeer("vader", env(), cache, Duration.ofMinutes(1))
                .run(Collective.ALLREDUCE, ElementType.BF16, 2, steps);
        assertEquals(Series.Status.SKIPPED, bf16.status());
    }

    @Test
    void glooThroughPyTorch() throws Exception {
        boolean installed = Files.isExecutable(Path.of(GlooPeer.DEFAULT_PYTHON));
        if (!installed) {
            System.out.println("PeersTest: skipping Gloo: no " + GlooPeer.DEFAULT_PYTHON + " (apt-get install python3-torch)");
        }
        assumeTrue(installed, GlooPeer.DEFAULT_PYTHON + " not installed");
        BenchCache cache = BenchCache.fromEnvironment(env());
        Series s = new GlooPeer(env(), cache, Duration.ofMinutes(2)).run(Collective.ALLREDUCE, ElementType.F32, 2, steps);
        assumeTrue(s.status() != Series.Status.SKIPPED, "PyTorch with gloo not importable: " + s.reason());
        assertEquals(Series.Status.OK, s.status(), s.reason());
        assertEquals(List.of(1024L, 65536L), s.measurements().stream().map(Measurement::bytes).toList());
        // Whatever this torch's gloo cannot do is reported as skipped with its reason, never as a failure.
        Series rs = new GlooPeer(env(), cache, Duration.ofMinutes(2)).run(Collective.REDUCESCATTER, ElementType.F32, 2, steps);
        assertTrue(rs.status() != Series.Status.FAILED, rs.reason());
    }

    /**
     * A Python whose torch does not import (here a torch package on PYTHONPATH that fails as a broken install does):
     * the skip line said the whole traceback, joined by " | ", where the last line is what was wrong.
     */
    @Test
    void glooIsSkippedInOneLineWithTheReasonAndTheErrorsLastLine(@TempDir Path dir) throws Exception {
        java.util.Optional<Path> python = PeerProcess.which("python3", System.getenv("PATH"));
        assumeTrue(python.isPresent(), "no python3 on PATH");
        Path torch = Files.createDirectories(dir.resolve("site/torch"));
        Files.writeString(torch.resolve("__init__.py"), "from torch._C import *\n");
        Files.writeString(torch.resolve("_C.py"), "raise ImportError('libtorch_cpu.so: cannot open shared object file:"
                + " No such file or directory')\n");
        Map<String, String> env = env();
        env.put("KOLO_BENCH_PYTHON", python.get().toString());
        env.put("PYTHONPATH", dir.resolve("site").toString());
        Series s = new GlooPeer(env, BenchCache.fromEnvironment(env), Duration.ofMinutes(1))
                .run(Collective.ALLREDUCE, ElementType.F32, 2, steps);
        assertEquals(Series.Status.SKIPPED, s.status(), s.reason());
        assertEquals("PyTorch with gloo is not importable by " + python.get() + " (Debian: apt-get install"
                + " python3-torch): ImportError: libtorch_cpu.so: cannot open shared object file: No such file or"
                + " directory", s.reason());
    }

    @Test
    void aPeerThatBreaksIsAFailureWithItsLastWords() {
        PeerProcess.Result crashed = new PeerProcess.Result(3, List.of(
                new Measurement(1024, 3, 1e-6, 1e-6, 1e-6, 1e-6).toLine()), List.of("boom"));
        Series s = Peer.fromOutput("X", crashed, steps);
        assertEquals(Series.Status.FAILED, s.status());
        assertTrue(s.reason().contains("code 3") && s.reason().contains("boom"), s.reason());
        Series partial = Peer.fromOutput("X", new PeerProcess.Result(0, crashed.stdout(), List.of()), steps);
        assertTrue(partial.reason().contains("1 of 2 sizes"), partial.reason());
    }

    @Test
    void mpirunOnGivenHostsUsesTheirInterfaceSshAndBinding() {
        BenchHosts hosts = new BenchHosts(List.of("n0:1", "n1:1"), "eth0", "ssh -F /c", List.of("-p", "2222"), "none");
        assertEquals(List.of("--allow-run-as-root", "--oversubscribe", "-np", "2", "--host", "n0:1,n1:1", "--bind-to",
                        "none", "--mca", "pml", "ob1", "--mca", "btl", "self,tcp", "--mca", "btl_tcp_if_include", "eth0",
                        "--mca", "oob_tcp_if_include", "eth0", "--mca", "plm_rsh_agent", "ssh -F /c",
                        "--mca", "plm_rsh_args", "-p 2222"),
                new OpenMpiPeer("tcp", Map.of(), null, Duration.ofMinutes(1), hosts).arguments(2));
        BenchHosts plain = new BenchHosts(List.of("n0:2"), null, null, List.of(), "core");
        assertEquals(List.of("--allow-run-as-root", "--oversubscribe", "-np", "2", "--host", "n0:2", "--bind-to",
                "core", "--mca", "pml", "ob1", "--mca", "btl", "self,tcp"),
                new OpenMpiPeer("tcp", Map.of(), null, Duration.ofMinutes(1), plain).arguments(2));
        assertEquals(List.of("--allow-run-as-root", "--oversubscribe", "-np", "2", "--mca", "pml", "ob1", "--mca",
                        "btl", "self,tcp", "--mca", "btl_tcp_if_include", "lo"),
                new OpenMpiPeer("tcp", Map.of(), null, Duration.ofMinutes(1)).arguments(2), "this machine: loopback");
        org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
                () -> new OpenMpiPeer("vader", Map.of(), null, Duration.ofMinutes(1), hosts));
    }

    @Test
    void onGivenHostsOnlyOpenMpiOverTcpRunsTheOthersAreSkippedWithTheReason() throws Exception {
        BenchHosts hosts = new BenchHosts(List.of("n0:1", "n1:1"), null, null, List.of(), "none");
        BenchSuite.Config config = new BenchSuite.Config(Collective.ALLREDUCE, 2, new long[] {1024}, ElementType.F32,
                Memory.NATIVE, 3, 1, List.of("tcp"), true, 2, Duration.ofMinutes(1), "./kolo bench allreduce", hosts);
        List<Peer> peers = BenchSuite.peers(config, env(), BenchCache.fromEnvironment(env()));
        assertEquals(List.of("OMPI shm", "OMPI tcp", "Gloo"), peers.stream().map(Peer::name).toList());
        for (Peer skipped : List.of(peers.get(0), peers.get(2))) {
            Series s = skipped.run(Collective.ALLREDUCE, ElementType.F32, 2, steps);
            assertEquals(Series.Status.SKIPPED, s.status());
            assertTrue(s.reason().contains("host"), s.reason());
        }
        assertTrue(peers.get(1) instanceof OpenMpiPeer);
    }
}
