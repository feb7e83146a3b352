package io.kolo.launcher.job;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertTrue;

class HostsTest {

    @Test
    void hostList() {
        assertEquals(List.of(new Hosts.Host("h1", 2), new Hosts.Host("h2", 3)), Hosts.parseList("h1:2,h2:3"));
        assertEquals(List.of(new Hosts.Host("h1", 1)), Hosts.parseList("h1"));
        assertEquals(List.of(new Hosts.Host("a", 3), new Hosts.Host("b", 1)), Hosts.parseList("a:1,b:1,a:2"));
    }

    @Test
    void hostListErrors() {
        assertTrue(assertThrows(UsageException.class, () -> Hosts.parseList("h1:0")).getMessage()
                .contains("positive integer"));
        assertThrows(UsageException.class, () -> Hosts.parseList("h1:x"));
        // Past an int: the same line, with the range, not a bare "positive integer" the value looks like.
        assertTrue(assertThrows(UsageException.class, () -> Hosts.parseList("h1:9999999999")).getMessage()
                .contains("must be a positive integer (1 to 2147483647), got '9999999999'"));
        assertThrows(UsageException.class, () -> Hosts.parseList("h1:2,,h2:2"));
        assertThrows(UsageException.class, () -> Hosts.parseList(":2"));
    }

    @Test
    void namesThatCannotBeHostNamesAreRefusedAtOnce() {
        for (String bad : List.of("@@##!!:2", "a b:1", "-leading:1", "x..y", "host/1:2", "h" + "a".repeat(64) + ":1")) {
            UsageException e = assertThrows(UsageException.class, () -> Hosts.parseList(bad), bad);
            assertTrue(e.getMessage().contains("is not a host name or IPv4 address"), e.getMessage());
        }
        assertEquals(List.of(new Hosts.Host("user@node-01.cluster.local", 2), new Hosts.Host("10.0.0.7", 1),
                        new Hosts.Host("worker_3", 1)),
                Hosts.parseList("user@node-01.cluster.local:2,10.0.0.7,worker_3"));
    }

    @Test
    void openMpiHostfileWithCommentsAndBlankLines() {
        List<String> lines = List.of(
                "# the cluster",
                "",
                "node1 slots=4 max_slots=8",
                "   node2   slots=2   # the small one",
                "node3 max_slots=2",
                "\t");
        assertEquals(List.of(new Hosts.Host("node1", 4), new Hosts.Host("node2", 2), new Hosts.Host("node3", 1)),
                Hosts.parseHostfile(lines, "hosts"));
    }

    @Test
    void mpichHostfile() {
        assertEquals(List.of(new Hosts.Host("node1", 2), new Hosts.Host("node2", 1)),
                Hosts.parseHostfile(List.of("node1:2", "node2  # one slot"), "hosts"));
    }

    @Test
    void hostfileErrorsNameTheLine() {
        UsageException e = assertThrows(UsageException.class,
                () -> Hosts.parseHostfile(List.of("ok slots=1", "bad slots=two"), "hf"));
        assertTrue(e.getMessage().startsWith("hf:2: "), e.getMessage());
        assertTrue(assertThrows(UsageException.class, () -> Hosts.parseHostfile(List.of("n cpus=2"), "hf"))
                .getMessage().contains("unknown hostfile keyword 'cpus'"));
        assertTrue(assertThrows(UsageException.class, () -> Hosts.parseHostfile(List.of("n slots=4 max_slots=2"), "hf"))
                .getMessage().contains("max_slots"));
        assertTrue(assertThrows(UsageException.class, () -> Hosts.parseHostfile(List.of("# nothing", ""), "hf"))
                .getMessage().contains("lists no hosts"));
        assertThrows(UsageException.class, () -> Hosts.parseHostfile(List.of("n slots"), "hf"));
    }

    @Test
    void localNamesAreThisMachineOnly() {
        var local = Hosts.localNames();
        assertTrue(local.test("localhost"));
        assertTrue(local.test("127.0.0.1"));
        assertTrue(local.test("127.0.1.1"));
        assertFalse(local.test("gpu-node-17.example"));
        // Looked up on the first name that is not obviously local, and still this machine's.
        String self = assertDoesNotThrow(() -> java.net.InetAddress.getLocalHost().getHostName());
        assertTrue(local.test(self), self);
        assertTrue(local.test(self.toUpperCase(java.util.Locale.ROOT)), self);
    }

    @Test
    void defaultHostfileComesFromTheMpiLaunchersVariables() {
        assertNull(Hosts.defaultHostfile(Map.of("HOME", "/root")));
        assertEquals(Map.entry("OMPI_MCA_orte_default_hostfile", "/etc/mpi/hostfile"),
                Hosts.defaultHostfile(Map.of("OMPI_MCA_orte_default_hostfile", "/etc/mpi/hostfile",
                        "HYDRA_HOST_FILE", "/other")));
        assertEquals(Map.entry("I_MPI_HYDRA_HOST_FILE", "/a"),
                Hosts.defaultHostfile(Map.of("I_MPI_HYDRA_HOST_FILE", "/a", "HYDRA_HOST_FILE", "/b")));
        assertEquals(Map.entry("HYDRA_HOST_FILE", "/b"), Hosts.defaultHostfile(Map.of("HYDRA_HOST_FILE", "/b")));
    }
}
