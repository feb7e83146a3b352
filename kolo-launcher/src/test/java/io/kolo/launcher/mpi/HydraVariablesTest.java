package io.kolo.launcher.mpi;

import io.kolo.launcher.workers.MpiWorker;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Kolo programs given the variables MPICH's and Intel MPI's Hydra launcher sets on one host (PMI_RANK,
 * PMI_SIZE, MPI_LOCALRANKID, MPI_LOCALNRANKS, no job id), started as real processes by this test because
 * MPICH is not installed next to Open MPI here: they meet as children of one parent, as Hydra's ranks are
 * children of one hydra_pmi_proxy.
 */
@Timeout(120)
class HydraVariablesTest {

    @Test
    void ranksWithHydrasVariablesJoinWithNoKoloVariable(@TempDir Path tmp) throws Exception {
        int n = 3;
        List<Process> ranks = new ArrayList<>();
        try {
            for (int r = 0; r < n; r++) {
                ProcessBuilder pb = new ProcessBuilder(Mpirun.JAVA, "-cp", Mpirun.CP, MpiWorker.class.getName())
                        .redirectErrorStream(true);
                pb.environment().keySet().removeIf(k -> k.startsWith("KOLO_") || k.startsWith("OMPI_")
                        || k.startsWith("PMI") || k.startsWith("SLURM_"));
                pb.environment().put("PMI_RANK", Integer.toString(r));
                pb.environment().put("PMI_SIZE", Integer.toString(n));
                pb.environment().put("MPI_LOCALRANKID", Integer.toString(r));
                pb.environment().put("MPI_LOCALNRANKS", Integer.toString(n));
                pb.environment().put("TMPDIR", tmp.toString());
                ranks.add(pb.start());
            }
            List<String> lines = new ArrayList<>();
            for (Process p : ranks) {
                String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
                assertTrue(p.waitFor(60, TimeUnit.SECONDS), "a rank did not finish");
                assertEquals(0, p.exitValue(), out);
                lines.addAll(out.lines().filter(l -> l.startsWith("rank ")).toList());
            }
            assertEquals(Mpirun.expectedLines(n), lines.stream().sorted().toList());
        } finally {
            ranks.forEach(Process::destroyForcibly);
        }
    }
}
