package io.kolo.bootstrap;

import org.junit.jupiter.api.Test;

import java.util.Map;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class LaunchTest {

    @Test
    void openMpiRanksShareThePmixNamespace() {
        Launch l = Launch.detect(Map.of("OMPI_COMM_WORLD_RANK", "1", "OMPI_COMM_WORLD_SIZE", "2",
                "PMIX_NAMESPACE", "1830944769", "OMPI_MCA_ess_base_jobid", "99")).orElseThrow();
        assertEquals("Open MPI", l.launcher());
        assertEquals(Optional.of("1830944769"), l.jobId());
        assertEquals(Optional.of("99"), Launch.detect(Map.of("OMPI_COMM_WORLD_RANK", "1",
                "OMPI_MCA_ess_base_jobid", "99")).orElseThrow().jobId());
        assertEquals("mpirun -x KOLO_RENDEZVOUS_ADDR=node0 ...", l.howToSet("KOLO_RENDEZVOUS_ADDR", "node0"));
    }

    @Test
    void slurmStepsOfOneAllocationAreDifferentLaunches() {
        Launch l = Launch.detect(Map.of("SLURM_PROCID", "0", "SLURM_JOB_ID", "42", "SLURM_STEP_ID", "3"))
                .orElseThrow();
        assertEquals("Slurm", l.launcher());
        assertEquals(Optional.of("42.3"), l.jobId());
    }

    @Test
    void hydraRanksShareTheirProxyPortOrTheirParentProcess() {
        assertEquals(Optional.of("node0:4242"), Launch.detect(Map.of("PMI_RANK", "0", "PMI_SIZE", "2",
                "PMI_PORT", "node0:4242")).orElseThrow().jobId());
        // Without PMI_PORT: ranks on one host are children of one hydra_pmi_proxy (here, of this test's parent).
        String id = Launch.detect(Map.of("PMI_RANK", "0", "PMI_SIZE", "2")).orElseThrow().jobId().orElseThrow();
        assertTrue(id.startsWith("pid" + ProcessHandle.current().parent().orElseThrow().pid() + "@"), id);
    }

    @Test
    void koloRunAndPlainProcessesAreNoForeignLaunch() {
        assertEquals(Optional.empty(), Launch.detect(Map.of("KOLO_RANK", "0", "OMPI_COMM_WORLD_RANK", "0")));
        assertEquals(Optional.empty(), Launch.detect(Map.of()));
    }
}
