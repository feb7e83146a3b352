package io.kolo.bootstrap;

import io.kolo.launch.JobSecret;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The handshake against a stranger who does not know the secret but can talk to the ports, and against an eavesdropper
 * who recorded a real handshake: neither gets a key read or written, nor anything derived from the secret to use.
 */
@Timeout(60)
class HandshakeAttackTest {
    /** What a server sends before the client proved itself: magic, version and its nonce. */
    private static final int SERVER_HEADER = 4 + 1 + 32;
    private static final Duration TIMEOUT = Duration.ofSeconds(10);
    private final JobSecret secret = JobSecret.generate();
    private final RendezvousServer server = RendezvousServer.start(InetAddress.getLoopbackAddress(), 0, secret);
    private final List<Socket> opened = new ArrayList<>();

    @AfterEach
    void close() throws IOException {
        for (Socket s : opened) {
            s.close();
        }
        server.close();
    }

    private Socket connect() throws IOException {
        Socket s = new Socket(server.address().getAddress(), server.address().getPort());
        s.setSoTimeout(10_000);
        opened.add(s);
        return s;
    }

    private static byte[] clientHeader(byte[] nonce, String claim) {
        byte[] c = claim.getBytes(StandardCharsets.UTF_8);
        return ByteBuffer.allocate(4 + 1 + 32 + 2 + c.length).putInt(0x4B4F4C4F).put((byte) 2).put(nonce)
                .putShort((short) c.length).put(c).array();
    }

    /** Everything the peer sends until it closes (or 10 s of silence). */
    private static byte[] drain(Socket s) throws IOException {
        ByteArrayOutputStream all = new ByteArrayOutputStream();
        InputStream in = s.getInputStream();
        byte[] buf = new byte[256];
        try {
            for (int n; (n = in.read(buf)) > 0; ) {
                all.write(buf, 0, n);
            }
        } catch (SocketTimeoutException | java.net.SocketException e) {
            // Silence or a reset: what came before is the answer.
        }
        return all.toByteArray();
    }

    @Test
    void aClientWithTheSecretConnectsAndItsClaimArrives() throws Exception {
        try (ServerSocket listener = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            CompletableFuture<String> claim = CompletableFuture.supplyAsync(() -> {
                try (Socket s = listener.accept()) {
                    return Handshake.server(s, secret, "data", TIMEOUT, Handshake.ClaimCheck.ANY);
                } catch (IOException e) {
                    throw new RuntimeException(e);
                }
            });
            try (Socket c = new Socket(InetAddress.getLoopbackAddress(), listener.getLocalPort())) {
                Handshake.client(c, secret, "data", "rank 2 of 3 to rank 0", TIMEOUT);
            }
            assertEquals("rank 2 of 3 to rank 0", claim.get(10, TimeUnit.SECONDS));
        }
    }

    /**
     * The reflection attack that broke the first handshake: open A, take A's challenge, present it on B hoping B
     * answers it with a proof to replay on A. The server now answers nothing derived from the secret before the
     * client proved itself, so there is no proof to take from anywhere.
     */
    @Test
    void theReflectionAttackFindsNoProofToReflect() throws Exception {
        Socket a = connect();
        a.getOutputStream().write(clientHeader(Handshake.newChallenge(), ""));
        byte[] aHeader = a.getInputStream().readNBytes(SERVER_HEADER);
        byte[] aNonce = Arrays.copyOfRange(aHeader, 5, SERVER_HEADER);

        Socket b = connect();
        b.getOutputStream().write(clientHeader(aNonce, ""));
        byte[] bHeader = b.getInputStream().readNBytes(SERVER_HEADER);
        assertEquals(SERVER_HEADER, bHeader.length);
        b.getOutputStream().write(new byte[32]);                 // B has no proof either: it can only guess
        assertArrayEquals(new byte[0], drain(b), "B answered a wrong proof with something");

        a.getOutputStream().write(aNonce);                        // A: the only material there is, reflected
        assertArrayEquals(new byte[0], drain(a), "A answered a reflected nonce with something");
        assertTrue(server.tryGet("host/0").isEmpty());
        assertEquals(0, server.unauthenticated());
    }

    /** A recorded handshake (and the requests after it) replayed on a new connection: the server's nonce differs. */
    @Test
    void aReplayedHandshakeNeitherReadsNorWritesAKey() throws Exception {
        server.put("addr/0", "10.1.2.3:4567");
        byte[] recorded;
        try (RecordingProxy proxy = new RecordingProxy(server.address())) {
            try (RendezvousClient legit = RendezvousClient.connect(proxy.address(), secret, TIMEOUT)) {
                assertEquals(Optional.of("10.1.2.3:4567"), legit.tryGet("addr/0"));
            }
            Thread.sleep(200);
            recorded = proxy.recorded();
        }
        assertTrue(recorded.length > SERVER_HEADER, "nothing recorded");
        // The replay: the same handshake and read, plus a write the attacker would like to plant.
        ByteArrayOutputStream replay = new ByteArrayOutputStream();
        replay.write(recorded);
        DataOutputStream put = new DataOutputStream(replay);
        put.writeByte(RendezvousProtocol.PUT);
        RendezvousProtocol.writeString(put, "addr/1");
        RendezvousProtocol.writeString(put, "6.6.6.6:1");
        Socket s = connect();
        s.getOutputStream().write(replay.toByteArray());
        byte[] answer = drain(s);
        assertEquals(SERVER_HEADER, answer.length, "the server answered the replay beyond its own header");
        assertTrue(server.tryGet("addr/1").isEmpty(), "the replayed PUT was processed");
    }

    /** A stranger that trickles bytes meets one deadline for the whole handshake, not one per read. */
    @Test
    void aTricklingPeerRunsIntoTheWholeHandshakeDeadline() throws Exception {
        try (ServerSocket listener = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
             Socket stranger = new Socket(InetAddress.getLoopbackAddress(), listener.getLocalPort());
             Socket accepted = listener.accept()) {
            Thread trickle = Thread.ofPlatform().daemon().start(() -> {
                try {
                    OutputStream o = stranger.getOutputStream();
                    for (byte b : clientHeader(Handshake.newChallenge(), "x")) {
                        o.write(b);
                        o.flush();
                        Thread.sleep(100);
                    }
                } catch (IOException | InterruptedException ignored) {
                    // Closed by the server, as it should be.
                }
            });
            IOException e = assertThrows(IOException.class,
                    () -> Handshake.server(accepted, secret, "data", Duration.ofMillis(800), Handshake.ClaimCheck.ANY));
            assertInstanceOf(SocketTimeoutException.class, e, e.toString());
            trickle.interrupt();
        }
    }

    /** Silent strangers beyond the cap push the oldest out; a real client still gets in and is served. */
    @Test
    void silentStrangersCannotFillTheServer() throws Exception {
        int cap = 32;
        int strangers = cap + 44;
        try (RendezvousServer small = RendezvousServer.start(InetAddress.getLoopbackAddress(), 0, secret,
                new RendezvousServer.Limits(cap, TIMEOUT))) {
            for (int i = 0; i < strangers; i++) {
                Socket s = new Socket(small.address().getAddress(), small.address().getPort());
                opened.add(s);
            }
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (System.nanoTime() < deadline && small.unauthenticated() < cap) {
                Thread.sleep(20);
            }
            assertEquals(cap, small.unauthenticated());
            try (RendezvousClient legit = RendezvousClient.connect(small.address(), secret, TIMEOUT)) {
                legit.put("k", "v");
                assertEquals(Optional.of("v"), legit.tryGet("k"));
            }
            assertTrue(small.unauthenticated() <= cap, small.unauthenticated() + " handshakes held");
            int closedByServer = 0;
            for (Socket s : opened) {
                s.setSoTimeout(1);
                try {
                    closedByServer += s.getInputStream().read() < 0 ? 1 : 0;
                } catch (SocketTimeoutException stillWaiting) {
                    // Among the newest: still in its handshake.
                } catch (java.net.SocketException reset) {
                    closedByServer++;
                }
            }
            assertTrue(closedByServer >= strangers - cap, "dropped " + closedByServer);
        }
    }
}
