package io.kolo.launcher.mpi;

import io.kolo.launcher.cluster.NetnsCluster;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Kolo programs started by the real Open MPI {@code mpirun} on two hosts (network namespaces with real
 * sshd; mpirun starts its daemons there over ssh), meeting through Open MPI's PMIx server with no variable,
 * or at {@code KOLO_RENDEZVOUS_ADDR}. Skipped where
 * namespaces, OpenSSH or mpirun are not available.
 */
@Timeout(180)
class MpirunAcrossHostsTest {
    @TempDir
    static Path dir;
    static NetnsCluster cluster;

    @BeforeAll
    static void startCluster() {
        Mpirun.require();
        cluster = NetnsCluster.start(2, dir.resolve("cluster"));
    }

    @AfterAll
    static void stopCluster() {
        if (cluster != null) {
            cluster.close();
        }
    }

    /** mpirun in the launcher namespace, 2 ranks on each of the 2 hosts, with {@code more} mpirun options. */
    private static Mpirun.Result mpirun(Map<String, String> env, String... more) throws Exception {
        return mpirun(env, List.of(), more);
    }

    private static Mpirun.Result mpirun(Map<String, String> env, List<String> beforeJava, String... more)
            throws Exception {
        List<String> args = new ArrayList<>(List.of("--mca", "plm_rsh_agent", cluster.sshCommandLine(),
                "--mca", "oob_tcp_if_include", NetnsCluster.SUBNET + "0/24",
                "--host", cluster.hostName(0) + ":2," + cluster.hostName(1) + ":2", "-np", "4"));
        args.addAll(List.of(more));
        return Mpirun.run(cluster.inLauncherNs(List.of()), args, env, beforeJava);
    }

    private static List<String> expectedLines() {
        List<String> lines = new ArrayList<>();
        for (int r = 0; r < 4; r++) {
            lines.add("rank " + r + " of 4 local " + r % 2 + " of 2: sum=10 gathered=[0.0, 10.0, 20.0, 30.0]"
                    + " broadcast=4242");
        }
        return lines;
    }

    @Test
    void oneVariableAndASecretFileOnASharedHomeAreEnough() throws Exception {
        Path home = Files.createDirectories(dir.resolve("home/.kolo")).getParent();
        Path secret = Files.writeString(home.resolve(".kolo/secret"),
                "8899aabbccddeeff00112233445566778899aabbccddeeff0011223344556677\n");
        Files.setPosixFilePermissions(secret, PosixFilePermissions.fromString("rw-------"));
        // -x HOME stands for the home directory every host of a real cluster shares.
        Mpirun.Result r = mpirun(Map.of(), "-x", "HOME=" + home, "-x", "KOLO_RENDEZVOUS_ADDR=" + cluster.address(0));
        assertEquals(0, r.code(), r.toString());
        assertEquals(expectedLines(), r.lines("rank "), r.toString());
    }

    @Test
    void koloSecretPassedOnByMpirunWorksToo() throws Exception {
        Mpirun.Result r = mpirun(Map.of("KOLO_SECRET", "0123456789abcdef0123456789abcdef"),
                "-x", "KOLO_SECRET", "-x", "KOLO_RENDEZVOUS_ADDR=" + cluster.address(0));
        assertEquals(0, r.code(), r.toString());
        assertEquals(expectedLines(), r.lines("rank "), r.toString());
    }

    @Test
    void withNoVariableAtAllRanksMeetThroughOpenMpisPmixServer(@TempDir Path emptyHome) throws Exception {
        // No KOLO_* variable, and no secret file: rank 0's address and a fresh secret travel through PMIx.
        Mpirun.Result r = mpirun(Map.of(), "-x", "HOME=" + emptyHome);
        assertEquals(0, r.code(), r.toString());
        assertEquals(expectedLines(), r.lines("rank "), r.toString());
        assertTrue(!r.err().contains("exiting improperly"), "PMIx was finalised:\n" + r);
    }

    /**
     * Before: rank 2, alone on the second host, read only its own host's count from mpirun's variables and took every
     * host to run one rank: cross rank 2 of 3. Horovod's is 1 of 2 (ranks 0 and 2 have local rank 0).
     */
    @Test
    void ranksOnUnevenHostsGetHorovodsCrossRanks(@TempDir Path emptyHome) throws Exception {
        List<String> args = List.of("--mca", "plm_rsh_agent", cluster.sshCommandLine(),
                "--mca", "oob_tcp_if_include", NetnsCluster.SUBNET + "0/24",
                "--host", cluster.hostName(0) + ":2," + cluster.hostName(1) + ":1", "-np", "3", "-x", "HOME=" + emptyHome);
        Mpirun.Result r = Mpirun.run(cluster.inLauncherNs(List.of()), args, Map.of(), "placement");
        assertEquals(0, r.code(), r.toString());
        assertEquals(List.of("rank 0 of 3 local 0 of 2 cross 0 of 2", "rank 1 of 3 local 1 of 2 cross 0 of 1",
                "rank 2 of 3 local 0 of 1 cross 1 of 2"), r.lines("rank "), r.toString());
    }

    @Test
    void withoutPmixOrTheVariableEveryRankSaysWhichOneToSet() throws Exception {
        // As under a launcher without PMIx: the ranks do not see Open MPI's PMIx server.
        Mpirun.Result r = mpirun(Map.of(), List.of("env", "-u", "PMIX_NAMESPACE"));
        assertNotEquals(0, r.code(), r.toString());
        List<String> failed = r.errLines("kolo: ");
        assertTrue(!failed.isEmpty(), r.toString());
        for (String line : failed) {
            assertTrue(line.contains("this Open MPI job spans hosts (2 of its 4 ranks on this one)")
                    && line.contains("mpirun -x KOLO_RENDEZVOUS_ADDR=node0 ..."), line);
        }
    }
}
