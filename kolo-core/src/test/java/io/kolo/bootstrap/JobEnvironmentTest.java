package io.kolo.bootstrap;

import io.kolo.Topology;
import io.kolo.launch.JobSecret;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

class JobEnvironmentTest {
    private static final String SECRET = JobSecret.generate().toHex();

    /** A valid four-rank job on two hosts, as kolo run would set it, plus the given changes. */
    private static Map<String, String> kolo(String... changes) {
        Map<String, String> env = new HashMap<>(Map.of(
                "KOLO_RANK", "3", "KOLO_SIZE", "4", "KOLO_LOCAL_RANK", "1", "KOLO_LOCAL_SIZE", "2",
                "KOLO_RENDEZVOUS_ADDR", "10.0.0.1", "KOLO_RENDEZVOUS_PORT", "29500",
                "KOLO_SECRET", SECRET));
        return apply(env, changes);
    }

    private static Map<String, String> apply(Map<String, String> env, String... changes) {
        for (int i = 0; i < changes.length; i += 2) {
            if (changes[i + 1] == null) {
                env.remove(changes[i]);
            } else {
                env.put(changes[i], changes[i + 1]);
            }
        }
        return env;
    }

    /** Rendezvous settings a multi-rank job needs whatever launched it. */
    private static Map<String, String> withRendezvous(String... placement) {
        return apply(new HashMap<>(Map.of("KOLO_RENDEZVOUS_PORT", "29500", "KOLO_SECRET", SECRET)), placement);
    }

    @Test
    void ranksStartedByMpirunOrSrunNeedNoRendezvousPortOrSecret() {
        JobEnvironment e = JobEnvironment.from(Map.of("OMPI_COMM_WORLD_RANK", "1", "OMPI_COMM_WORLD_SIZE", "4"));
        assertEquals(0, e.rendezvousPort());
        assertTrue(e.secret().isEmpty());
        assertEquals(3, JobEnvironment.from(Map.of("SLURM_PROCID", "3", "SLURM_NTASKS", "4")).rank());
        // kolo run's own variables still need both: kolo run always sets them.
        IllegalArgumentException x = assertThrows(IllegalArgumentException.class,
                () -> JobEnvironment.from(Map.of("KOLO_RANK", "1", "KOLO_SIZE", "4")));
        assertTrue(x.getMessage().startsWith("KOLO_RENDEZVOUS_PORT is not set"), x.getMessage());
    }

    @Test
    void noVariablesMeansASingleProcessWithDefaults() {
        JobEnvironment e = JobEnvironment.from(Map.of());
        assertEquals(0, e.rank());
        assertEquals(1, e.size());
        assertEquals(0, e.localRank());
        assertEquals(1, e.localSize());
        assertEquals(0, e.crossRank());
        assertEquals(1, e.crossSize());
        assertEquals("127.0.0.1", e.rendezvousHost());
        assertEquals(0, e.rendezvousPort());
        assertEquals(JobEnvironment.RendezvousServer.RANK0, e.rendezvousServer());
        assertTrue(e.secret().isEmpty());
        assertEquals(InetAddress.ofLiteral("127.0.0.1"), e.bindAddress());
        assertEquals(Duration.ofSeconds(60), e.startTimeout());
        assertEquals(Duration.ofSeconds(300), e.timeout());
        assertTrue(e.env().isEmpty());
    }

    @Test
    void koloVariables() {
        Map<String, String> env = kolo("KOLO_RENDEZVOUS_SERVER", "launcher", "KOLO_START_TIMEOUT_SECONDS", "5",
                "KOLO_TIMEOUT_SECONDS", "7", "KOLO_IFACE", "127.0.0.1", "KOLO_FUSION_BYTES", "1024");
        JobEnvironment e = JobEnvironment.from(env);
        assertEquals(3, e.rank());
        assertEquals(4, e.size());
        assertEquals(1, e.localRank());
        assertEquals(2, e.localSize());
        assertEquals(1, e.crossRank());
        assertEquals(2, e.crossSize());
        assertEquals("10.0.0.1", e.rendezvousHost());
        assertEquals(29500, e.rendezvousPort());
        assertEquals(JobEnvironment.RendezvousServer.LAUNCHER, e.rendezvousServer());
        assertEquals(SECRET, e.secret().orElseThrow().toHex());
        assertEquals(InetAddress.ofLiteral("127.0.0.1"), e.bindAddress());
        assertEquals(Duration.ofSeconds(5), e.startTimeout());
        assertEquals(Duration.ofSeconds(7), e.timeout());
        assertEquals("1024", e.env().get("KOLO_FUSION_BYTES"));
        assertThrows(UnsupportedOperationException.class, () -> e.env().put("x", "y"));
    }

    @Test
    void explicitCrossPlacementWins() {
        JobEnvironment e = JobEnvironment.from(kolo("KOLO_CROSS_RANK", "0", "KOLO_CROSS_SIZE", "3"));
        assertEquals(0, e.crossRank());
        assertEquals(3, e.crossSize());
    }

    /**
     * Placement variables that cannot all be true are refused, naming the variable, whether or not KOLO_RANK is set.
     * Before: without KOLO_RANK they were ignored (a single process), and a cross size no placement of the ranks
     * allows was taken as given.
     */
    @Test
    void inconsistentPlacementIsRefusedNamingTheVariable() {
        // The variable to be named, then the environment: only these variables, or (after "+") the four-rank job's.
        List<List<String>> refused = List.of(
                List.of("KOLO_LOCAL_SIZE", "KOLO_SIZE", "1", "KOLO_LOCAL_SIZE", "5"),
                List.of("KOLO_LOCAL_SIZE", "KOLO_RANK", "0", "KOLO_SIZE", "1", "KOLO_LOCAL_SIZE", "5"),
                List.of("KOLO_LOCAL_RANK", "KOLO_SIZE", "1", "KOLO_LOCAL_RANK", "1"),
                List.of("KOLO_CROSS_SIZE", "KOLO_CROSS_SIZE", "2"),
                List.of("KOLO_RANK", "KOLO_SIZE", "4"),
                List.of("KOLO_LOCAL_RANK", "+", "KOLO_LOCAL_RANK", "2"),
                // No host layout allows it: four ranks, two of them on this host, on four hosts.
                List.of("KOLO_CROSS_SIZE", "+", "KOLO_CROSS_SIZE", "4", "KOLO_CROSS_RANK", "1"));
        for (List<String> c : refused) {
            boolean onJob = c.get(1).equals("+");
            String[] changes = c.subList(onJob ? 2 : 1, c.size()).toArray(String[]::new);
            Map<String, String> env = onJob ? kolo(changes) : apply(new HashMap<>(), changes);
            io.kolo.BadSettingException x = assertThrows(io.kolo.BadSettingException.class,
                    () -> JobEnvironment.from(env), env.toString());
            assertEquals(c.getFirst(), x.variable(), x.getMessage());
            assertTrue(x.getMessage().startsWith(c.getFirst()), x.getMessage());
            assertEquals(1, x.getMessage().lines().count(), x.getMessage());
        }
        // Hosts of different sizes are fine: three ranks on one host and one on another.
        JobEnvironment uneven = JobEnvironment.from(kolo("KOLO_LOCAL_RANK", "0", "KOLO_LOCAL_SIZE", "1",
                "KOLO_CROSS_RANK", "1", "KOLO_CROSS_SIZE", "2"));
        assertEquals(2, uneven.crossSize());
    }

    @Test
    void withoutLocalVariablesAllRanksShareOneHost() {
        JobEnvironment e = JobEnvironment.from(kolo("KOLO_LOCAL_RANK", null, "KOLO_LOCAL_SIZE", null, "KOLO_RANK", "2"));
        assertEquals(2, e.localRank());
        assertEquals(4, e.localSize());
        assertEquals(0, e.crossRank());
        assertEquals(1, e.crossSize());
    }

    @Test
    void localRankDefaultsToThePositionOnAPackedHost() {
        JobEnvironment e = JobEnvironment.from(kolo("KOLO_LOCAL_RANK", null));
        assertEquals(1, e.localRank());
        assertEquals(1, e.crossRank());
    }

    @Test
    void openMpi() {
        JobEnvironment e = JobEnvironment.from(withRendezvous("OMPI_COMM_WORLD_RANK", "5", "OMPI_COMM_WORLD_SIZE", "8",
                "OMPI_COMM_WORLD_LOCAL_RANK", "1", "OMPI_COMM_WORLD_LOCAL_SIZE", "4",
                // Lower-priority sources are ignored once Open MPI is found.
                "PMI_RANK", "0", "PMI_SIZE", "1", "SLURM_PROCID", "0", "SLURM_NTASKS", "1"));
        assertEquals(5, e.rank());
        assertEquals(8, e.size());
        assertEquals(1, e.localRank());
        assertEquals(4, e.localSize());
        assertEquals(1, e.crossRank());
        assertEquals(2, e.crossSize());
    }

    @Test
    void mpichAndIntelMpi() {
        JobEnvironment e = JobEnvironment.from(withRendezvous("PMI_RANK", "2", "PMI_SIZE", "6",
                "MPI_LOCALRANKID", "2", "MPI_LOCALNRANKS", "3", "SLURM_PROCID", "0", "SLURM_NTASKS", "1"));
        assertEquals(2, e.rank());
        assertEquals(6, e.size());
        assertEquals(2, e.localRank());
        assertEquals(3, e.localSize());
        assertEquals(0, e.crossRank());
        assertEquals(2, e.crossSize());
    }

    @Test
    void slurmLocalSizeIsThisNodesCountInTheStepsTasksPerNode() {
        JobEnvironment e = JobEnvironment.from(withRendezvous("SLURM_PROCID", "4", "SLURM_NTASKS", "5",
                "SLURM_LOCALID", "1", "SLURM_NODEID", "1", "SLURM_STEP_TASKS_PER_NODE", "3,2",
                "SLURM_TASKS_PER_NODE", "8(x2)"));
        assertEquals(2, e.localSize());
        assertEquals(1, e.localRank());
        assertEquals(3, JobEnvironment.from(withRendezvous("SLURM_PROCID", "0", "SLURM_NTASKS", "5",
                "SLURM_NODEID", "0", "SLURM_TASKS_PER_NODE", "3,2")).localSize());
        IllegalArgumentException x = assertThrows(IllegalArgumentException.class, () -> JobEnvironment.from(
                withRendezvous("SLURM_PROCID", "0", "SLURM_NTASKS", "4", "SLURM_NODEID", "2",
                        "SLURM_TASKS_PER_NODE", "2(x2)")));
        assertTrue(x.getMessage().startsWith("SLURM_NODEID='2' is invalid"), x.getMessage());
    }

    /**
     * Before: Slurm's and mpirun's ranks got their host's index among ceil(size / local size) hosts as cross rank and
     * size (rank 4 of a 3,2 step: 2 of 3); now Horovod's, from every node's tasks where Slurm gives them.
     */
    @Test
    void slurmAndMpirunRanksGetHorovodsCrossRanksFromTheTasksOfEveryNode() {
        Random random = new Random(42);
        for (int trial = 0; trial < 50; trial++) {
            List<Integer> tasks = new ArrayList<>();
            for (int n = 1 + random.nextInt(5); n > 0; n--) {
                tasks.add(1 + random.nextInt(4));
            }
            List<Topology> horovod = Placement.packed(tasks);
            String perNode = String.join(",", tasks.stream().map(String::valueOf).toList());
            for (Topology t : horovod) {
                int node = 0;
                for (int first = 0; first + tasks.get(node) <= t.rank(); node++) {
                    first += tasks.get(node);
                }
                JobEnvironment e = JobEnvironment.from(withRendezvous("SLURM_PROCID", "" + t.rank(),
                        "SLURM_NTASKS", "" + t.size(), "SLURM_LOCALID", "" + t.localRank(), "SLURM_NODEID", "" + node,
                        "SLURM_STEP_TASKS_PER_NODE", perNode));
                assertEquals(t, e.topology(), "tasks per node " + perNode);
            }
        }
        // mpirun gives no other host's count: hosts are taken to run as many as this one, the last fewer.
        JobEnvironment e = JobEnvironment.from(withRendezvous("OMPI_COMM_WORLD_RANK", "2", "OMPI_COMM_WORLD_SIZE", "7",
                "OMPI_COMM_WORLD_LOCAL_RANK", "2", "OMPI_COMM_WORLD_LOCAL_SIZE", "3"));
        assertEquals(0, e.crossRank());
        assertEquals(2, e.crossSize());
    }

    @Test
    void slurmWithTasksPerNodeCount() {
        JobEnvironment e = JobEnvironment.from(withRendezvous("SLURM_PROCID", "3", "SLURM_NTASKS", "4",
                "SLURM_LOCALID", "1", "SLURM_NTASKS_PER_NODE", "2", "SLURM_TASKS_PER_NODE", "9(x9)"));
        assertEquals(3, e.rank());
        assertEquals(4, e.size());
        assertEquals(1, e.localRank());
        assertEquals(2, e.localSize());
        assertEquals(1, e.crossRank());
        assertEquals(2, e.crossSize());
    }

    @Test
    void slurmTasksPerNodeListUsesTheFirstNumber() {
        JobEnvironment e = JobEnvironment.from(withRendezvous("SLURM_PROCID", "4", "SLURM_NTASKS", "6",
                "SLURM_LOCALID", "0", "SLURM_TASKS_PER_NODE", "4(x1),2"));
        assertEquals(4, e.localSize());
        assertEquals(0, e.localRank());
        assertEquals(1, e.crossRank());
        assertEquals(2, e.crossSize());
    }

    @Test
    void koloVariablesTakePrecedenceOverMpi() {
        JobEnvironment e = JobEnvironment.from(kolo("OMPI_COMM_WORLD_RANK", "0", "OMPI_COMM_WORLD_SIZE", "2"));
        assertEquals(3, e.rank());
        assertEquals(4, e.size());
    }

    @Test
    void interfaceNameResolvesToItsIpv4Address() throws Exception {
        NetworkInterface lo = NetworkInterface.networkInterfaces()
                .filter(n -> n.inetAddresses().anyMatch(a -> a instanceof Inet4Address && a.isLoopbackAddress()))
                .findFirst().orElse(null);
        assumeTrue(lo != null, "no loopback interface with an IPv4 address");
        JobEnvironment e = JobEnvironment.from(kolo("KOLO_IFACE", lo.getName()));
        assertTrue(e.bindAddress() instanceof Inet4Address);
        assertTrue(e.bindAddress().isLoopbackAddress());
    }

    @Test
    void singleProcessMayHaveASecret() {
        JobEnvironment e = JobEnvironment.from(Map.of("KOLO_SECRET", SECRET));
        assertEquals(SECRET, e.secret().orElseThrow().toHex());
    }

    static Stream<Arguments> invalid() {
        return Stream.of(
                Arguments.of(kolo("KOLO_RANK", "three"), new String[] {"KOLO_RANK", "three", "non-negative integer"}),
                Arguments.of(kolo("KOLO_RANK", "-1"), new String[] {"KOLO_RANK", "-1", "non-negative integer"}),
                Arguments.of(kolo("KOLO_RANK", "4"), new String[] {"KOLO_RANK", "4", "below KOLO_SIZE=4"}),
                Arguments.of(kolo("KOLO_SIZE", "0"), new String[] {"KOLO_SIZE", "0", "positive integer"}),
                Arguments.of(kolo("KOLO_SIZE", null), new String[] {"KOLO_SIZE", "not set"}),
                Arguments.of(kolo("KOLO_LOCAL_RANK", "2"), new String[] {"KOLO_LOCAL_RANK", "2", "below the local size 2"}),
                Arguments.of(kolo("KOLO_LOCAL_RANK", "x"), new String[] {"KOLO_LOCAL_RANK", "x", "integer"}),
                Arguments.of(kolo("KOLO_LOCAL_SIZE", "5"), new String[] {"KOLO_LOCAL_SIZE", "5", "at most the job size 4"}),
                Arguments.of(kolo("KOLO_LOCAL_SIZE", "-2"), new String[] {"KOLO_LOCAL_SIZE", "-2", "positive integer"}),
                Arguments.of(kolo("KOLO_CROSS_RANK", "2"), new String[] {"KOLO_CROSS_RANK", "2", "below the cross size 2"}),
                Arguments.of(kolo("KOLO_CROSS_SIZE", "0"), new String[] {"KOLO_CROSS_SIZE", "0", "positive integer"}),
                Arguments.of(kolo("KOLO_RENDEZVOUS_PORT", null), new String[] {"KOLO_RENDEZVOUS_PORT", "not set", "4 ranks"}),
                Arguments.of(kolo("KOLO_RENDEZVOUS_PORT", "http"), new String[] {"KOLO_RENDEZVOUS_PORT", "http", "TCP port"}),
                Arguments.of(kolo("KOLO_RENDEZVOUS_PORT", "70000"), new String[] {"KOLO_RENDEZVOUS_PORT", "70000", "1 to 65535"}),
                Arguments.of(kolo("KOLO_RENDEZVOUS_ADDR", " "), new String[] {"KOLO_RENDEZVOUS_ADDR", "host"}),
                Arguments.of(kolo("KOLO_RENDEZVOUS_SERVER", "rank1"), new String[] {"KOLO_RENDEZVOUS_SERVER", "rank1", "'launcher' or 'rank0'"}),
                Arguments.of(kolo("KOLO_SECRET", null), new String[] {"KOLO_SECRET", "not set", "kolo run sets it", "openssl rand -hex 32"}),
                Arguments.of(kolo("KOLO_SECRET", "zz"), new String[] {"KOLO_SECRET", "hex"}),
                Arguments.of(kolo("KOLO_IFACE", "nosuchif0"), new String[] {"KOLO_IFACE", "nosuchif0", "interface name"}),
                Arguments.of(kolo("KOLO_IFACE", "300.1.1.1"), new String[] {"KOLO_IFACE", "300.1.1.1", "IP address"}),
                Arguments.of(kolo("KOLO_START_TIMEOUT_SECONDS", "-5"), new String[] {"KOLO_START_TIMEOUT_SECONDS", "-5", "positive integer"}),
                Arguments.of(kolo("KOLO_TIMEOUT_SECONDS", "1.5"), new String[] {"KOLO_TIMEOUT_SECONDS", "1.5", "positive integer"}),
                Arguments.of(withRendezvous("OMPI_COMM_WORLD_RANK", "1", "OMPI_COMM_WORLD_SIZE", "two"),
                        new String[] {"OMPI_COMM_WORLD_SIZE", "two", "positive integer"}),
                // Too large for an int: it said "expected a positive integer", which it is.
                Arguments.of(withRendezvous("OMPI_COMM_WORLD_RANK", "1", "OMPI_COMM_WORLD_SIZE", "9999999999"),
                        new String[] {"OMPI_COMM_WORLD_SIZE", "9999999999", "positive integer (1 to 2147483647)"}),
                Arguments.of(withRendezvous("PMI_RANK", "9999999999", "PMI_SIZE", "4"),
                        new String[] {"PMI_RANK", "9999999999", "non-negative integer (0 to 2147483647)"}),
                Arguments.of(withRendezvous("PMI_RANK", "9", "PMI_SIZE", "4"), new String[] {"PMI_RANK", "9", "below PMI_SIZE=4"}),
                Arguments.of(withRendezvous("SLURM_PROCID", "0", "SLURM_NTASKS", "4", "SLURM_TASKS_PER_NODE", "(x2)"),
                        new String[] {"SLURM_TASKS_PER_NODE", "(x2)", "task count"}));
    }

    @ParameterizedTest
    @MethodSource("invalid")
    void invalidValuesNameTheVariableTheValueAndWhatIsExpected(Map<String, String> env, String[] expected) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> JobEnvironment.from(env));
        for (String part : expected) {
            assertTrue(e.getMessage().contains(part), "'" + e.getMessage() + "' lacks '" + part + "'");
        }
    }
}
