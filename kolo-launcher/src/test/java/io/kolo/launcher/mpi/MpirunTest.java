package io.kolo.launcher.mpi;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Kolo programs started by the real Open MPI {@code mpirun} on this host, with no Kolo variable: they take
 * rank and size from Open MPI and meet through rank 0's rendezvous file. Skipped when mpirun is absent.
 */
@Timeout(150)
class MpirunTest {

    @ParameterizedTest(name = "mpirun -np {0} with no Kolo variable")
    @ValueSource(ints = {2, 3, 4})
    void ranksStartedByMpirunJoinWithNoKoloVariable(int np, @TempDir Path tmp) throws Exception {
        Mpirun.Result r = Mpirun.run(Mpirun.oneHost(np), Map.of("TMPDIR", tmp.toString()));
        assertEquals(0, r.code(), r.toString());
        assertEquals(Mpirun.expectedLines(np), r.lines("rank "), r.toString());
        // Rank 0 deleted its rendezvous file (port and secret) when it shut down.
        try (Stream<Path> dirs = Files.list(tmp)) {
            for (Path dir : dirs.toList()) {
                assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(dir)), dir.toString());
                try (Stream<Path> files = Files.list(dir)) {
                    assertEquals(List.of(), files.toList(), "left in " + dir);
                }
            }
        }
    }

    @Test
    void aRankThatExitsFailsTheMpirunJob(@TempDir Path tmp) throws Exception {
        Mpirun.Result r = Mpirun.run(Mpirun.oneHost(3), Map.of("TMPDIR", tmp.toString()), "exit-rank-1");
        assertNotEquals(0, r.code(), r.toString());
        assertTrue(r.err().contains("Exit code:    3"), "mpirun names rank 1's exit code:\n" + r);
    }

    /**
     * A rank whose exception unwinds through {@code finally { Kolo.shutdown(); }} leaves the job before the JVM sees the
     * exception, and under mpirun no launcher of Kolo's records its exit. Before: the others waited 2 s and said only
     * that another rank shut down. Now they read its last words in rank 0's store and name it and its exception.
     */
    @Test
    void aRankThatThrowsInsideFinallyShutdownIsNamedByTheOthers(@TempDir Path tmp) throws Exception {
        Mpirun.Result r = Mpirun.run(Mpirun.oneHost(3), Map.of("TMPDIR", tmp.toString()), "throw-rank-2-finally");
        assertNotEquals(0, r.code(), r.toString());
        String cause = "rank 2 failed: IllegalStateException: injected failure at iteration 20";
        for (int rank = 0; rank < 2; rank++) {
            String said = "rank " + rank + " failed: RankFailedException: ";
            int shown = rank;
            assertTrue(r.out().lines().anyMatch(l -> l.startsWith(said) && l.contains(cause)),
                    "rank " + shown + " does not name rank 2 and its exception:\n" + r);
        }
    }

    @Test
    void ranksMeetAtKoloRendezvousAddrWithTheUsersSecretFile(@TempDir Path home, @TempDir Path tmp) throws Exception {
        Path secret = Files.createDirectory(home.resolve(".kolo")).resolve("secret");
        Files.writeString(secret, "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff\n");
        Files.setPosixFilePermissions(secret, PosixFilePermissions.fromString("rw-------"));
        Mpirun.Result r = Mpirun.run(Mpirun.oneHost(3, "-x", "KOLO_RENDEZVOUS_ADDR=127.0.0.1",
                "-x", "KOLO_RENDEZVOUS_PORT=" + freePort()), Map.of("HOME", home.toString(), "TMPDIR", tmp.toString()));
        assertEquals(0, r.code(), r.toString());
        assertEquals(Mpirun.expectedLines(3), r.lines("rank "), r.toString());
    }

    @Test
    void koloRendezvousAddrWithoutAnySecretFailsOnEveryRankSayingWhatToCreate(@TempDir Path home) throws Exception {
        Mpirun.Result r = Mpirun.run(Mpirun.oneHost(2, "-x", "KOLO_RENDEZVOUS_ADDR=127.0.0.1"),
                Map.of("HOME", home.toString()));
        assertNotEquals(0, r.code(), r.toString());
        // Kolo.init() ends each rank with one line, as for a bad setting.
        List<String> failed = r.errLines("kolo: ");
        assertTrue(!failed.isEmpty(), r.toString());
        for (String line : failed) {
            assertTrue(line.contains("neither KOLO_SECRET nor " + home.resolve(".kolo/secret") + " exists")
                    && line.contains("openssl rand -hex 32 > ~/.kolo/secret")
                    && line.contains("mpirun -x KOLO_SECRET"), line);
        }
    }

    @Test
    void aSecretFileOthersCanReadIsRefused(@TempDir Path home) throws Exception {
        Path secret = Files.createDirectory(home.resolve(".kolo")).resolve("secret");
        Files.writeString(secret, "00112233445566778899aabbccddeeff\n");
        Files.setPosixFilePermissions(secret, PosixFilePermissions.fromString("rw-r--r--"));
        Mpirun.Result r = Mpirun.run(Mpirun.oneHost(2, "-x", "KOLO_RENDEZVOUS_ADDR=127.0.0.1"),
                Map.of("HOME", home.toString()));
        assertNotEquals(0, r.code(), r.toString());
        assertTrue(r.err().contains("kolo: " + secret + " can be read by other users: chmod 600 " + secret),
                r.toString());
    }

    @Test
    void rank0ServesTheJobViewOnKoloDashboardPortAndWritesKoloReport(@TempDir Path tmp) throws Exception {
        int port = freePort();
        Path report = tmp.resolve("mpirun.html");
        java.util.concurrent.CompletableFuture<Mpirun.Result> job = java.util.concurrent.CompletableFuture.supplyAsync(
                () -> {
                    try {
                        return Mpirun.run(Mpirun.oneHost(3, "-x", "KOLO_DASHBOARD_PORT=" + port, "-x",
                                "KOLO_REPORT=" + report, "-x", "KOLO_VIEW_INTERVAL_MS=200"),
                                Map.of("TMPDIR", tmp.toString()), "seconds-8");
                    } catch (Exception e) {
                        throw new java.util.concurrent.CompletionException(e);
                    }
                });
        com.fasterxml.jackson.databind.ObjectMapper json = new com.fasterxml.jackson.databind.ObjectMapper();
        com.fasterxml.jackson.databind.JsonNode live = null;
        long deadline = System.nanoTime() + 80_000_000_000L;
        boolean allRunning = false;
        while (!allRunning && !job.isDone() && System.nanoTime() - deadline < 0) {
            Thread.sleep(200);
            try {
                live = json.readTree(io.kolo.launcher.ViewClient.get("http://127.0.0.1:" + port + "/api/job")
                        .body());
            } catch (java.io.IOException notYet) {
                continue;
            }
            allRunning = live.get("ranks").size() == 3;
            for (com.fasterxml.jackson.databind.JsonNode r : live.get("ranks")) {
                allRunning &= r.get("state").asText().equals("RUNNING") && r.get("ops").asLong() > 0;
            }
        }
        Mpirun.Result r = job.get(120, java.util.concurrent.TimeUnit.SECONDS);
        assertTrue(allRunning, "rank 0 never showed 3 running ranks; last: " + live + "\n" + r);
        assertEquals(0, r.code(), r.toString());
        assertEquals(1, r.errLines("kolo: job view at http://127.0.0.1:" + port + "/").size(), r.toString());
        com.fasterxml.jackson.databind.JsonNode end = io.kolo.launcher.ViewClient.reportJson(report);
        assertEquals("SUCCEEDED", end.get("state").asText());
        assertEquals(3, end.get("ranks").size());
        boolean loss = false;
        for (com.fasterxml.jackson.databind.JsonNode m : end.get("metrics")) {
            loss |= m.get("name").asText().equals("loss");
        }
        assertTrue(loss, "no loss point in the report: " + end.get("metrics"));
    }

    private static int freePort() throws Exception {
        try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }
}
