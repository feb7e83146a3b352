package io.kolo.launch;

import io.kolo.KoloException;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The rendezvous service's lifecycle on loopback, and the shared-memory cleanup an embedder runs per host. */
class RendezvousServiceTest {
    private static final InetAddress LOOPBACK = InetAddress.getLoopbackAddress();

    @Test
    void servesOnTheAddressItWasGivenAnEphemeralPortAndStopsOnClose() throws IOException {
        RendezvousService store = RendezvousService.start(LOOPBACK, 0, JobSecret.generate());
        InetSocketAddress at = store.address();
        assertEquals(LOOPBACK, at.getAddress());
        assertTrue(at.getPort() > 0, "port " + at.getPort());
        assertEquals("RendezvousService[" + LOOPBACK.getHostAddress() + ":" + at.getPort() + "]", store.toString());
        try (Socket s = new Socket(at.getAddress(), at.getPort())) {
            assertTrue(s.isConnected());
        }
        store.close();
        store.close();   // idempotent
        assertThrows(IOException.class, () -> new Socket(at.getAddress(), at.getPort()).close(),
                "nothing listens after close");
    }

    @Test
    void aPortInUseOrOutOfRangeIsOneLineNamingIt() {
        JobSecret secret = JobSecret.generate();
        try (RendezvousService first = RendezvousService.start(LOOPBACK, 0, secret)) {
            int port = first.address().getPort();
            KoloException e = assertThrows(KoloException.class, () -> RendezvousService.start(LOOPBACK, port, secret));
            assertTrue(e.getMessage().startsWith("cannot start the rendezvous server on " + LOOPBACK.getHostAddress()
                    + ":" + port + ": "), e.getMessage());
            assertFalse(e.getMessage().contains("\n"), e.getMessage());
        }
        assertEquals("rendezvous port 70000 is invalid: expected 0 (any free port) or a TCP port from 1 to 65535",
                assertThrows(IllegalArgumentException.class, () -> RendezvousService.start(LOOPBACK, 70000, secret))
                        .getMessage());
    }

    @Test
    void ranksWhoseServiceWasClosedFailWithinTheStartTimeoutRatherThanHang() throws Exception {
        JobSecret secret = JobSecret.generate();
        RendezvousService store = RendezvousService.start(LOOPBACK, 0, secret);
        InetSocketAddress at = store.address();
        store.close();
        List<Map<String, String>> envs = new ArrayList<>();
        for (int r = 0; r < 2; r++) {
            envs.add(WorkerEnvironment.forRank(r, 2).rendezvous(at).secret(secret)
                    .startTimeout(Duration.ofSeconds(2)).build());
        }
        long start = System.nanoTime();
        List<Object> results = LaunchedRanks.run(envs, 60, comm -> "joined");
        for (Object o : results) {
            Throwable t = assertInstanceOf(Throwable.class, o);
            assertFalse(t.getMessage().contains("\n"), "one line: " + t.getMessage());
        }
        assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(30), "failed near the start timeout");
    }

    @Test
    void removesTheSegmentsOfDeadProcessesOnlyAndCountsThem() throws Exception {
        Path shm = Path.of("/dev/shm");
        org.junit.jupiter.api.Assumptions.assumeTrue(Files.isDirectory(shm) && Files.isWritable(shm),
                "skipped: no writable /dev/shm");
        Process gone = new ProcessBuilder("true").start();
        assertTrue(gone.waitFor(30, TimeUnit.SECONDS), "'true' did not exit");
        String job = "launchtest" + ProcessHandle.current().pid() + "x" + System.nanoTime();
        Path stale = Files.createFile(shm.resolve("kolo-" + job + "-0-" + gone.pid()));
        Path live = Files.createFile(shm.resolve("kolo-" + job + "-1-" + ProcessHandle.current().pid()));
        try {
            assertTrue(SharedMemory.removeStaleSegments() >= 1);
            assertFalse(Files.exists(stale), "the dead process's segment is removed");
            assertTrue(Files.exists(live), "a live process's segment is left alone");
        } finally {
            Files.deleteIfExists(stale);
            Files.deleteIfExists(live);
        }
    }
}
