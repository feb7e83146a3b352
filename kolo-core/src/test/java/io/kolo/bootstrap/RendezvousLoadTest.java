package io.kolo.bootstrap;

import io.kolo.launch.JobSecret;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The rendezvous server under a large job's start and next to peers that misbehave: thousands of connections served
 * by one thread, and neither a silent stranger nor a slow client holding up anyone else.
 */
@Timeout(180)
class RendezvousLoadTest {
    private static final Duration WAIT = Duration.ofSeconds(120);
    private final JobSecret secret = JobSecret.generate();
    private final List<AutoCloseable> opened = new ArrayList<>();

    @AfterEach
    void closeAll() throws Exception {
        for (AutoCloseable c : opened.reversed()) {
            c.close();
        }
    }

    private RendezvousServer server(RendezvousServer.Limits limits) {
        RendezvousServer s = RendezvousServer.start(InetAddress.getLoopbackAddress(), 0, secret, limits);
        opened.add(s);
        return s;
    }

    /**
     * 2,000 ranks start at once, as a 2,000-rank job's do: each connects, writes its address and reads the whole table
     * in one request; every rank gets every address, from one serving thread, in two requests per rank.
     */
    @Test
    void twoThousandClientsReadTheTableFromOneServingThread() throws Exception {
        int ranks = 2000;
        RendezvousServer server = server(RendezvousServer.Limits.DEFAULT);
        List<Future<List<String>>> tables = new ArrayList<>();
        try (ExecutorService ranksAsThreads = Executors.newVirtualThreadPerTaskExecutor()) {
            for (int r = 0; r < ranks; r++) {
                int rank = r;
                tables.add(ranksAsThreads.submit(() -> {
                    try (RendezvousClient c = RendezvousClient.connect(server.address(), secret, WAIT)) {
                        c.put("addr/" + rank, "10.0." + rank / 256 + "." + rank % 256 + ":4000");
                        return c.getEach("addr/", ranks, WAIT);
                    }
                }));
            }
            assertEquals(1, servingThreads(), "threads serving the store while every rank waits in it");
            for (Future<List<String>> t : tables) {
                List<String> table = t.get(WAIT.toSeconds(), TimeUnit.SECONDS);
                assertEquals(ranks, table.size());
                assertEquals("10.0.7.207:4000", table.get(1999));
                assertEquals("10.0.0.0:4000", table.get(0));
            }
        }
        assertEquals(2L * ranks, server.requests());
        assertEquals(0, server.unauthenticated());
    }

    private static long servingThreads() {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.getName().startsWith("kolo-rendezvous")).count();
    }

    /**
     * Strangers that connect and say nothing, or trickle a byte at a time, are closed at the handshake's deadline, and
     * meanwhile ranks connect and are served as if they were not there.
     */
    @Test
    void silentAndTricklingStrangersAreClosedAtTheDeadlineWithoutHoldingUpRanks() throws Exception {
        RendezvousServer server = server(new RendezvousServer.Limits(64, Duration.ofSeconds(8)));
        List<Socket> strangers = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            strangers.add(stranger(server));
        }
        Socket trickling = stranger(server);
        Thread trickle = Thread.ofPlatform().daemon().start(() -> {
            try {
                OutputStream o = trickling.getOutputStream();
                for (byte b : ByteBuffer.allocate(5).putInt(0x4B4F4C4F).put((byte) 2).array()) {
                    o.write(b);
                    Thread.sleep(300);
                }
                for (int i = 0; i < 100; i++) {
                    o.write(0);
                    Thread.sleep(300);
                }
            } catch (IOException | InterruptedException ignored) {
                // Closed by the server, as it should be.
            }
        });
        strangers.add(trickling);
        awaitHandshakes(server, strangers.size());
        try (RendezvousClient rank = RendezvousClient.connect(server.address(), secret, WAIT)) {
            rank.put("addr/0", "a");
            assertEquals(List.of("a"), rank.getEach("addr/", 1, WAIT));
        }
        assertEquals(strangers.size(), server.unauthenticated(), "the rank was served only once the strangers were gone");
        for (Socket s : strangers) {
            assertTrue(closedByServer(s, Duration.ofSeconds(30)), "a stranger's connection outlived the deadline");
        }
        trickle.join(10_000);
        assertEquals(0, server.unauthenticated());
    }

    private static void awaitHandshakes(RendezvousServer server, int count) throws InterruptedException {
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (server.unauthenticated() < count && System.nanoTime() < until) {
            Thread.sleep(10);
        }
        assertEquals(count, server.unauthenticated());
    }

    /**
     * What a stranger may make the server hold is a handshake's bytes: one that sends a megabyte with a plausible
     * header, or an oversized claim, is closed once the handshake fails, not buffered.
     */
    @Test
    void aStrangerStreamingBytesIsClosedAfterAHandshakesWorth() throws Exception {
        RendezvousServer server = server(RendezvousServer.Limits.DEFAULT);
        for (int claimLength : new int[] {0, 256, 0xFFFF}) {
            Socket s = stranger(server);
            ByteBuffer header = ByteBuffer.allocate(4 + 1 + 32 + 2).putInt(0x4B4F4C4F).put((byte) 2).put(new byte[32])
                    .putShort((short) claimLength);
            Thread.ofPlatform().daemon().start(() -> {
                try {
                    OutputStream o = s.getOutputStream();
                    o.write(header.array());
                    byte[] junk = new byte[64 * 1024];
                    for (int i = 0; i < 16; i++) {
                        o.write(junk);
                    }
                } catch (IOException closedByServer) {
                    // What the test expects: the server stopped reading and closed.
                }
            });
            assertTrue(closedByServer(s, Duration.ofSeconds(20)), "the server kept reading a stranger's megabyte");
        }
        try (RendezvousClient rank = RendezvousClient.connect(server.address(), secret, WAIT)) {
            rank.put("k", "v");
            assertEquals(Optional.of("v"), rank.tryGet("k"));
        }
        assertEquals(0, server.unauthenticated());
    }

    /** An authenticated client that stops in the middle of a request holds up nobody; its request completes later. */
    @Test
    void aClientStalledInTheMiddleOfARequestHoldsUpNobody() throws Exception {
        RendezvousServer server = server(RendezvousServer.Limits.DEFAULT);
        Socket slow = new Socket(server.address().getAddress(), server.address().getPort());
        opened.add(slow);
        Handshake.client(slow, secret, RendezvousProtocol.PURPOSE, "", Duration.ofSeconds(10));
        slow.setSoTimeout(20_000);
        DataOutputStream out = new DataOutputStream(slow.getOutputStream());
        out.writeByte(RendezvousProtocol.PUT);
        out.writeInt("slow".length());
        out.write("sl".getBytes());
        out.flush();

        try (RendezvousClient other = RendezvousClient.connect(server.address(), secret, WAIT)) {
            other.put("addr/0", "x");
            assertEquals(List.of("x"), other.getEach("addr/", 1, Duration.ofSeconds(5)));
            assertEquals(Optional.empty(), other.tryGet("slow"));
        }
        out.write("ow".getBytes());
        RendezvousProtocol.writeString(out, "done");
        out.flush();
        assertEquals(RendezvousProtocol.OK, slow.getInputStream().read());
        assertEquals(Optional.of("done"), server.tryGet("slow"));
    }

    /** A GET parked in the store is answered when another thread of the server's process writes the key. */
    @Test
    void aParkedGetIsAnsweredByALocalWriteAndATimedOutOneLeavesTheConnectionUsable() throws Exception {
        RendezvousServer server = server(RendezvousServer.Limits.DEFAULT);
        try (RendezvousClient c = RendezvousClient.connect(server.address(), secret, WAIT)) {
            assertEquals(Optional.empty(), timedOut(() -> c.get("never", Duration.ofMillis(200))));
            Thread.ofPlatform().daemon().start(() -> {
                try {
                    Thread.sleep(300);
                } catch (InterruptedException ignored) {
                    return;
                }
                server.put("later", "here");
            });
            assertEquals("here", c.get("later", Duration.ofSeconds(20)));
            c.put("after", "ok");
            assertEquals("ok", c.get("after", Duration.ofSeconds(1)));
        }
    }

    private static Optional<String> timedOut(java.util.function.Supplier<String> get) {
        try {
            return Optional.of(get.get());
        } catch (io.kolo.KoloTimeoutException expected) {
            return Optional.empty();
        }
    }

    private Socket stranger(RendezvousServer server) throws IOException {
        Socket s = new Socket(server.address().getAddress(), server.address().getPort());
        opened.add(s);
        return s;
    }

    /** Whether the server closed {@code s} (an end of stream or a reset) within {@code within}. */
    private static boolean closedByServer(Socket s, Duration within) throws IOException {
        s.setSoTimeout((int) within.toMillis());
        InputStream in = s.getInputStream();
        byte[] buf = new byte[256];
        try {
            while (in.read(buf) >= 0) {
                // A server header may come first; read on to the close.
            }
            return true;
        } catch (SocketTimeoutException stillOpen) {
            return false;
        } catch (java.net.SocketException reset) {
            return true;
        }
    }
}
