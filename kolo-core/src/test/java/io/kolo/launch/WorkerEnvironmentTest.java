package io.kolo.launch;

import io.kolo.BadSettingException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** What an embedder hands each rank, and the one-line errors for what it gets wrong. */
class WorkerEnvironmentTest {
    private static final JobSecret SECRET = JobSecret.fromHex("00112233445566778899aabbccddeeff");

    @Test
    void theVariablesOfARankPlacedByTheHostsOfEveryRank() {
        Map<String, String> env = WorkerEnvironment.forRank(4, List.of("b", "a", "b", "c", "a"))
                .rendezvous("10.0.0.1", 29500).secret(SECRET)
                .startTimeout(Duration.ofMillis(1500)).timeout(Duration.ofMinutes(2)).build();
        assertEquals(Map.ofEntries(Map.entry("KOLO_RANK", "4"), Map.entry("KOLO_SIZE", "5"),
                Map.entry("KOLO_LOCAL_RANK", "1"), Map.entry("KOLO_LOCAL_SIZE", "2"),
                Map.entry("KOLO_CROSS_RANK", "1"), Map.entry("KOLO_CROSS_SIZE", "2"),
                Map.entry("KOLO_HOSTNAME", "a"), Map.entry("KOLO_RENDEZVOUS_ADDR", "10.0.0.1"),
                Map.entry("KOLO_RENDEZVOUS_PORT", "29500"), Map.entry("KOLO_RENDEZVOUS_SERVER", "launcher"),
                Map.entry("KOLO_SECRET", SECRET.toHex()), Map.entry("KOLO_START_TIMEOUT_SECONDS", "2"),
                Map.entry("KOLO_TIMEOUT_SECONDS", "120")), env);
    }

    /** Before: cross rank and size were the host's index among the hosts (rank 4: 1 of 3), not Horovod's. */
    @Test
    void ranksOnOneHostAreLocalRanksInRankOrderAndCrossRanksCountTheRanksWithTheSameLocalRank() {
        List<String> hosts = List.of("b", "a", "b", "c", "a");
        String[] expected = {"0 2 0 3 b", "0 2 1 3 a", "1 2 0 2 b", "0 1 2 3 c", "1 2 1 2 a"};
        for (int r = 0; r < hosts.size(); r++) {
            Map<String, String> env = WorkerEnvironment.forRank(r, hosts).rendezvous("h", 1).secret(SECRET).build();
            assertEquals(expected[r], env.get("KOLO_LOCAL_RANK") + " " + env.get("KOLO_LOCAL_SIZE") + " "
                    + env.get("KOLO_CROSS_RANK") + " " + env.get("KOLO_CROSS_SIZE") + " " + env.get("KOLO_HOSTNAME"),
                    "rank " + r);
        }
    }

    @Test
    void explicitSettingsAndTimeoutsTheLaterTimeoutWinning() {
        Map<String, String> env = WorkerEnvironment.forRank(1, 2).rendezvous("h", 1).secret(SECRET)
                .startTimeout(Duration.ofSeconds(5))
                .settings(Map.of("KOLO_START_TIMEOUT_SECONDS", "9", "KOLO_FUSION_THRESHOLD", "0", "KOLO_APP_OWN", "x"))
                .build();
        assertEquals("5", env.get("KOLO_START_TIMEOUT_SECONDS"));
        assertEquals("0", env.get("KOLO_FUSION_THRESHOLD"));
        assertEquals("x", env.get("KOLO_APP_OWN"));
        assertEquals("1", env.get("KOLO_LOCAL_RANK"));
        assertEquals("2", env.get("KOLO_LOCAL_SIZE"));
        assertEquals("1", env.get("KOLO_CROSS_SIZE"));
    }

    @Test
    void settingsFromAnEnvironmentAreCheckedOnceAndLeavePlacementOut() {
        assertEquals(Map.of("KOLO_TIMEOUT_SECONDS", "30", "KOLO_DJL_THREADS", "2"),
                WorkerEnvironment.settingsFrom(Map.of("KOLO_TIMEOUT_SECONDS", "30", "KOLO_DJL_THREADS", "2",
                        "KOLO_RENDEZVOUS_PORT", "29500", "KOLO_SIZE", "4", "HOME", "/root")));
        BadSettingException e = assertThrows(BadSettingException.class,
                () -> WorkerEnvironment.settingsFrom(Map.of("KOLO_TIMEOUT_SECONDS", "soon")));
        assertEquals("KOLO_TIMEOUT_SECONDS", e.variable());
        assertEquals("KOLO_TIMEOUT_SECONDS='soon' is invalid: expected a positive integer (1 to 2147483647)", e.getMessage());
        assertEquals(Duration.ofSeconds(60), WorkerEnvironment.startTimeout(Map.of()));
        assertEquals(Duration.ofSeconds(7), WorkerEnvironment.startTimeout(Map.of("KOLO_START_TIMEOUT_SECONDS", "7")));
        assertTrue(WorkerEnvironment.placementVariables().contains("KOLO_SECRET"));
    }

    @Test
    void badInputFailsWithOneLineNamingWhatIsWrong() {
        oneLine(IllegalArgumentException.class, "rank 3 is outside a job of 3 ranks",
                () -> WorkerEnvironment.forRank(3, 3));
        oneLine(IllegalArgumentException.class, "job size 0 is invalid: a job needs at least one rank",
                () -> WorkerEnvironment.forRank(0, 0));
        oneLine(IllegalArgumentException.class, "rank 2 is outside a job of 2 ranks (one host per rank given)",
                () -> WorkerEnvironment.forRank(2, List.of("a", "b")));
        oneLine(IllegalArgumentException.class, "the host of rank 1 is blank: expected a host name or IP address for"
                + " every rank", () -> WorkerEnvironment.forRank(0, List.of("a", " ")));
        oneLine(IllegalArgumentException.class, "local rank 2 of 2 is invalid: expected 0 <= local rank < local size"
                + " <= the job size 4", () -> WorkerEnvironment.forRank(0, 4).local(2, 2));
        oneLine(IllegalArgumentException.class, "cross rank 0 of 5 is invalid: expected 0 <= cross rank < cross size"
                + " <= the job size 4", () -> WorkerEnvironment.forRank(0, 4).cross(0, 5));
        oneLine(IllegalStateException.class, "rank 1 of 2 needs the rendezvous service's address: call"
                + " rendezvous(service.address())", () -> WorkerEnvironment.forRank(1, 2).secret(SECRET).build());
        oneLine(IllegalStateException.class, "rank 0 of 2 needs the job's secret: call secret(...) with the secret"
                + " the rendezvous service was started with",
                () -> WorkerEnvironment.forRank(0, 2).rendezvous("h", 5).build());
        oneLine(IllegalArgumentException.class, "rendezvous port 0 is invalid: expected the TCP port the rendezvous"
                + " service listens on, 1 to 65535 (RendezvousService.address() has it)",
                () -> WorkerEnvironment.forRank(0, 2).rendezvous("h", 0));
        oneLine(IllegalArgumentException.class, "rendezvous address 0.0.0.0 is the wildcard: give a host the ranks"
                + " can reach, rendezvous(host, 7)",
                () -> WorkerEnvironment.forRank(0, 2).rendezvous(new InetSocketAddress("0.0.0.0", 7)));
        oneLine(IllegalArgumentException.class, "startTimeout PT0S is invalid: expected a positive duration",
                () -> WorkerEnvironment.forRank(0, 1).startTimeout(Duration.ZERO));
        Throwable placement = oneLine(IllegalArgumentException.class, null,
                () -> WorkerEnvironment.forRank(0, 1).settings(Map.of("KOLO_RANK", "0")));
        assertTrue(placement.getMessage().startsWith("KOLO_RANK is not a setting here: WorkerEnvironment decides"),
                placement.getMessage());
        BadSettingException bad = (BadSettingException) oneLine(BadSettingException.class,
                "KOLO_CYCLE_TIME='fast' is invalid: expected a non-negative number of milliseconds",
                () -> WorkerEnvironment.forRank(0, 1).settings(Map.of("KOLO_CYCLE_TIME", "fast")));
        assertEquals("KOLO_CYCLE_TIME", bad.variable());
        // KOLO_IFACE names an interface of the rank's host, which need not be the embedder's: not resolved here.
        assertEquals("no-such-interface-here", WorkerEnvironment.forRank(0, 2).rendezvous("h", 5).secret(SECRET)
                .settings(Map.of("KOLO_IFACE", "no-such-interface-here")).build().get("KOLO_IFACE"));
    }

    @Test
    void theSecretIsNeverShownAndDerivedSecretsAgreeOnlyOnTheirLabel() {
        JobSecret s = JobSecret.generate();
        assertEquals("JobSecret[hidden]", s.toString());
        assertEquals(s.toHex(), JobSecret.fromHex(" " + s.toHex() + "\n").toHex());
        assertEquals(s.derive("attempt 1").toHex(), s.derive("attempt 1").toHex());
        assertNotEquals(s.derive("attempt 1").toHex(), s.derive("attempt 2").toHex());
        assertNotEquals(s.toHex(), s.derive("attempt 1").toHex());
        assertNotEquals(s.toHex(), JobSecret.generate().toHex());
        assertEquals(64, s.toHex().length());
        String builder = WorkerEnvironment.forRank(0, 2).secret(s).toString();
        assertFalse(builder.contains(s.toHex()), builder);
        String notHex = "zz" + "0".repeat(40);
        Throwable e = oneLine(IllegalArgumentException.class, null, () -> JobSecret.fromHex(notHex));
        assertFalse(e.getMessage().contains(notHex), e.getMessage());
        oneLine(IllegalArgumentException.class, "KOLO_SECRET is too short: use at least 32 hex digits (128 bits)",
                () -> JobSecret.fromHex("0011"));
    }

    /** Asserts the failure's type and, when given, its exact message; every message is one line. */
    private static Throwable oneLine(Class<? extends Throwable> type, String message, Executable call) {
        Throwable e = assertThrows(type, call);
        if (message != null) {
            assertEquals(message, e.getMessage());
        }
        assertFalse(e.getMessage().contains("\n"), "one line: " + e.getMessage());
        return e;
    }
}
