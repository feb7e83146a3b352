package io.kolo.launcher.mpi;

import io.kolo.launcher.workers.MpiWorker;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Kolo programs started by the real Slurm {@code srun} on a one-node test cluster, with no Kolo variable.
 * Skipped (with the reason) without the Slurm and munge packages or without root.
 */
@Timeout(180)
class SlurmTest {
    private static SlurmCluster cluster;

    @BeforeAll
    static void startCluster() throws Exception {
        cluster = SlurmCluster.start();
    }

    @AfterAll
    static void stopCluster() throws Exception {
        if (cluster != null) {
            cluster.close();
        }
    }

    private static Mpirun.Result srun(int n, Path tmp, String... workerArgs) throws Exception {
        return srun(n, tmp, java.util.Map.of(), workerArgs);
    }

    private static Mpirun.Result srun(int n, Path tmp, java.util.Map<String, String> env, String... workerArgs)
            throws Exception {
        List<String> cmd = new java.util.ArrayList<>(List.of("/usr/bin/srun", "-n", Integer.toString(n),
                Mpirun.JAVA, "-cp", Mpirun.CP, MpiWorker.class.getName()));
        cmd.addAll(List.of(workerArgs));
        ProcessBuilder pb = new ProcessBuilder(cmd);
        pb.environment().keySet().removeIf(k -> k.startsWith("KOLO_") || k.startsWith("SLURM_"));
        pb.environment().put("SLURM_CONF", cluster.conf());
        pb.environment().put("TMPDIR", tmp.toString());
        pb.environment().putAll(env);
        Process p = pb.start();
        try {
            CompletableFuture<String> err = CompletableFuture.supplyAsync(() -> {
                try {
                    return new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
                } catch (java.io.IOException e) {
                    return e.toString();
                }
            });
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertTrue(p.waitFor(120, TimeUnit.SECONDS), "srun did not finish in 120 s");
            return new Mpirun.Result(p.exitValue(), out, err.get(10, TimeUnit.SECONDS));
        } finally {
            p.descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly();
        }
    }

    @ParameterizedTest(name = "srun -n {0} with no Kolo variable")
    @ValueSource(ints = {2, 3})
    void tasksStartedBySrunJoinWithNoKoloVariable(int n, @TempDir Path tmp) throws Exception {
        Mpirun.Result r = srun(n, tmp);
        assertEquals(0, r.code(), r.toString());
        assertEquals(Mpirun.expectedLines(n), r.lines("rank "), r.toString());
        try (Stream<Path> dirs = Files.list(tmp)) {
            for (Path dir : dirs.toList()) {
                try (Stream<Path> files = Files.list(dir)) {
                    assertEquals(List.of(), files.toList(), "rank 0 leaves no rendezvous file in " + dir);
                }
            }
        }
    }

    /** A variable the tasks cannot use (srun passes the user's environment on): one line from every task, exit 2. */
    @Test
    void aBadVariableIsOneLineFromEveryTask(@TempDir Path tmp) throws Exception {
        Mpirun.Result r = srun(2, tmp, java.util.Map.of("KOLO_IFACE", "kolo-no-such-if"));
        assertEquals(2, r.code(), r.toString());
        List<String> lines = r.errLines("kolo: ");
        assertEquals(2, lines.size(), r.toString());
        lines.forEach(l -> assertTrue(l.startsWith("kolo: KOLO_IFACE='kolo-no-such-if' is invalid"), l));
        assertTrue(!r.err().contains("\tat io.kolo"), "a stack trace:\n" + r);
    }

    @Test
    void aTaskThatExitsFailsTheOthersAndTheStep(@TempDir Path tmp) throws Exception {
        Mpirun.Result r = srun(3, tmp, "exit-rank-1");
        assertEquals(3, r.code(), r.toString());
        List<String> failed = r.lines("rank ? failed");
        assertEquals(2, failed.size(), r.toString());
        for (String line : failed) {
            // No kolo run records the exit here: the ranks name rank 1's own last words.
            assertTrue(line.contains("RankFailedException")
                    && line.contains("rank 1 failed: called System.exit at io.kolo.launcher.workers.MpiWorker.main("), line);
        }
    }
}
