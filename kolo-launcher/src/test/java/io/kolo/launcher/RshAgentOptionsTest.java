package io.kolo.launcher;

import io.kolo.launcher.job.StaticPlan;
import io.kolo.launcher.job.UsageException;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The rsh agent is named as mpirun takes it: OMPI_MCA_plm_rsh_agent, overridden by -mca/--mca plm_rsh_agent on the
 * command line, or Intel MPI's -launcher rsh -launcher-exec; an ssh agent stays ssh with plm_rsh_args added.
 */
class RshAgentOptionsTest {
    private static final Map<String, String> PATH = Map.of("PATH", "/usr/bin:/bin");

    static StaticPlan plan(Map<String, String> env, String... args) {
        return RunCommandTest.parse(args).plan(env, h -> h.equals("localhost"));
    }

    private static Map<String, String> env(String... kv) {
        Map<String, String> env = new java.util.HashMap<>(PATH);
        for (int i = 0; i < kv.length; i += 2) {
            env.put(kv[i], kv[i + 1]);
        }
        return env;
    }

    @Test
    void theAgentComesFromTheEnvironmentAndTheCommandLineWins() {
        StaticPlan fromEnv = plan(env("OMPI_MCA_plm_rsh_agent", "/bin/true"), "-np", "2", "-H", "pod-0:2", "--",
                "true");
        assertEquals(List.of("/bin/true"), fromEnv.agent().argv());
        assertEquals("OMPI_MCA_plm_rsh_agent", fromEnv.agent().source());
        assertEquals(List.of("pod-0"), fromEnv.remoteHosts());
        StaticPlan flag = plan(env("OMPI_MCA_plm_rsh_agent", "/bin/true"), "-np", "2", "-H", "pod-0:2",
                "--mca", "plm_rsh_agent", "/bin/false", "--", "true");
        assertEquals(List.of("/bin/false"), flag.agent().argv());
        assertEquals("-mca plm_rsh_agent", flag.agent().source());
        StaticPlan intel = plan(env(), "-np", "2", "-H", "pod-0:2", "-launcher", "rsh", "-launcher-exec",
                "/bin/true", "--", "true");
        assertEquals(List.of("/bin/true"), intel.agent().argv());
        assertNull(plan(env(), "-np", "2", "--", "true").agent());
    }

    @Test
    void ofOpenMpisAlternativesTheFirstThatExistsIsUsed() {
        StaticPlan p = plan(env("OMPI_MCA_plm_rsh_agent", "/no/such/agent : /bin/true -v"), "-np", "1", "-H",
                "pod-0", "--", "true");
        assertEquals(List.of("/bin/true", "-v"), p.agent().argv());
        UsageException none = assertThrows(UsageException.class, () -> plan(env("OMPI_MCA_plm_rsh_agent",
                "/etc/mpi/kubexec.sh"), "-np", "1", "--", "true"));
        assertEquals("the rsh agent '/etc/mpi/kubexec.sh' (OMPI_MCA_plm_rsh_agent) cannot be run here:"
                + " /etc/mpi/kubexec.sh: No such file or directory (no rank was started)", none.getMessage());
    }

    @Test
    void anSshAgentIsSshWithPlmRshArgs() {
        assertTrue(java.nio.file.Files.isExecutable(java.nio.file.Path.of("/usr/bin/ssh"))
                || java.nio.file.Files.isExecutable(java.nio.file.Path.of("/bin/ssh")), "needs an ssh client");
        StaticPlan p = plan(env("OMPI_MCA_plm_rsh_agent", "ssh", "OMPI_MCA_plm_rsh_args", "-F /etc/ssh/cluster"),
                "-np", "2", "-H", "node-1:2", "--", "true");
        assertNull(p.agent());
        assertEquals(List.of("ssh", "-F", "/etc/ssh/cluster"), p.ssh().command());
        StaticPlan flags = plan(env(), "-np", "2", "-H", "node-1:2", "-mca", "plm_rsh_agent", "ssh", "-mca",
                "plm_rsh_args", "-o ConnectTimeout=3", "--", "true");
        assertEquals(List.of("ssh", "-o", "ConnectTimeout=3"), flags.ssh().command());
        StaticPlan own = plan(env("OMPI_MCA_plm_rsh_agent", "ssh", "KOLO_SSH_COMMAND", "ssh -F mine"), "-np", "2",
                "-H", "node-1:2", "--", "true");
        assertEquals(List.of("ssh", "-F", "mine"), own.ssh().command());
    }

    @Test
    void plmRshArgsForAnAgentThatIsNotSshAreIgnoredWithAWarning() {
        StaticPlan p = plan(env("OMPI_MCA_plm_rsh_agent", "/bin/true", "OMPI_MCA_plm_rsh_args", "-x"), "-np", "1",
                "-H", "pod-0", "--", "true");
        assertEquals(List.of("/bin/true"), p.agent().argv());
        assertEquals(List.of("kolo: plm_rsh_args ignored: the rsh agent /bin/true is not ssh and gets only HOST"
                + " COMMAND"), p.warnings());
    }

    @Test
    void aLauncherKoloRunCannotUseIsAUsageError() {
        UsageException e = assertThrows(UsageException.class, () -> plan(env(), "-np", "1", "-launcher", "slurm",
                "--", "true"));
        assertEquals("-launcher slurm: kolo run starts remote ranks with ssh or with an rsh agent (-launcher rsh"
                + " -launcher-exec AGENT)", e.getMessage());
    }

    @Test
    void theAgentsMcaKeysAreNotListedAsIgnored() {
        StaticPlan p = plan(env(), "-np", "1", "--verbose", "-mca", "plm_rsh_agent", "/bin/true", "-mca", "btl",
                "^openib", "--", "true");
        assertEquals(List.of("kolo: -mca btl ^openib ignored: it tunes Open MPI's own transports; Kolo's settings are"
                + " KOLO_* variables (see docs/settings.md)"), p.display().ignored());
    }
}
