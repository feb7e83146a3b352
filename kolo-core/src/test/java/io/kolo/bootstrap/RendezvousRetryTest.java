package io.kolo.bootstrap;

import io.kolo.KoloTimeoutException;
import io.kolo.launch.JobSecret;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.Optional;
import java.util.Queue;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A rank connecting to a store too busy to finish its handshake, or to one closing at the port where the next job's
 * store will listen: a connect reset, or a handshake dropped, reset or left unanswered, is tried again until the start's
 * deadline, and when none succeeds the rank says in one line what it tried.
 */
@Timeout(90)
class RendezvousRetryTest {
    private final JobSecret secret = JobSecret.generate();
    private final RendezvousServer server = RendezvousServer.start(InetAddress.getLoopbackAddress(), 0, secret);

    @AfterEach
    void close() {
        server.close();
    }

    /** How the stand-in for a busy server treats a connection before it lets one through. */
    enum Drop {
        /** Closes before sending anything, as a server closing (or not Kolo's) would. */
        HANG_UP,
        /**
         * Resets the connection as soon as it is accepted, before reading anything the client sent: what a store
         * closing at this port does to the connects in its backlog.
         */
        RESET_AT_ACCEPT,
        /** Reads the client's header, then resets: what the server does to its oldest handshake to make room. */
        RESET_AFTER_HEADER,
        /** Never answers: a server too busy to get to it before the handshake's deadline. */
        SILENCE
    }

    @Test
    void droppedAndResetHandshakesAreRetriedUntilOneGetsThrough() throws Exception {
        try (BusyProxy proxy = new BusyProxy(server.address(), Drop.HANG_UP, Drop.RESET_AFTER_HEADER, Drop.HANG_UP,
                Drop.RESET_AFTER_HEADER);
             RendezvousClient c = RendezvousClient.connect(proxy.address(), secret, Duration.ofSeconds(30))) {
            c.put("k", "v");
            assertEquals(Optional.of("v"), server.tryGet("k"));
            assertEquals(5, proxy.accepted());
        }
    }

    /**
     * The store at this port resets the first connects (a job's store closing while the next job's ranks connect), then
     * the new store answers: the rank gets through, and its connection works.
     */
    @ParameterizedTest
    @EnumSource(value = Drop.class, names = {"RESET_AT_ACCEPT", "RESET_AFTER_HEADER"})
    void connectsResetBeforeTheStoreAnswersAreRetriedUntilItDoes(Drop reset) throws Exception {
        int resets = 3;
        Drop[] first = new Drop[resets];
        Arrays.fill(first, reset);
        try (BusyProxy proxy = new BusyProxy(server.address(), first);
             RendezvousClient c = RendezvousClient.connect(proxy.address(), secret, Duration.ofSeconds(30))) {
            c.put("k", "v");
            assertEquals("v", c.get("k", Duration.ofSeconds(10)));
            assertEquals(Optional.of("v"), server.tryGet("k"));
            assertEquals(resets + 1, proxy.accepted(), "every reset connect, then the one that got through");
        }
    }

    /**
     * A reset that connect() itself reports, because it came before the client's connect() returned, is tried again as a
     * refusal is. The stand-in above causes one only by chance (the scheduler decides whether the reset or the client's
     * connect() comes first), so the decision is checked here, on what connect() throws then.
     */
    @Test
    void aResetReportedByConnectItselfIsTriedAgain() {
        assertTrue(RendezvousClient.connectMaySucceedLater(new SocketException("Connection reset by peer")));
        assertTrue(RendezvousClient.connectMaySucceedLater(new ConnectException("Connection refused")));
        assertFalse(RendezvousClient.connectMaySucceedLater(new UnknownHostException("no-such-host.invalid")));
    }

    @Test
    void aHandshakeThatTimesOutIsRetried() throws Exception {
        try (BusyProxy proxy = new BusyProxy(server.address(), Drop.SILENCE);
             RendezvousClient c = RendezvousClient.connect(proxy.address(), secret, Duration.ofSeconds(40))) {
            c.put("k", "v");
            assertEquals(Optional.of("v"), server.tryGet("k"));
            assertEquals(2, proxy.accepted());
        }
    }

    @Test
    void whenEveryAttemptIsDroppedTheErrorSaysWhatWasTriedInOneLine() throws Exception {
        Drop[] always = new Drop[1000];
        Arrays.fill(always, Drop.RESET_AFTER_HEADER);
        try (BusyProxy proxy = new BusyProxy(server.address(), always)) {
            KoloTimeoutException e = assertThrows(KoloTimeoutException.class,
                    () -> RendezvousClient.connect(proxy.address(), secret, Duration.ofMillis(1500)));
            String m = e.getMessage();
            assertFalse(m.contains("\n"), m);
            assertTrue(m.contains(proxy.accepted() + " attempts (" + proxy.accepted() + " dropped in the handshake)"), m);
            assertTrue(m.contains("within 1.5 s") || m.contains("within 1500 ms"), m);
            assertTrue(m.contains("KOLO_START_TIMEOUT_SECONDS"), m);
            assertTrue(proxy.accepted() > 1, m);
        }
    }

    /** The start timeout is short; the test's own timeout only guards against a hang. */
    @ParameterizedTest
    @EnumSource(value = Drop.class, names = {"RESET_AT_ACCEPT", "RESET_AFTER_HEADER"})
    @Timeout(30)
    void whenEveryConnectIsResetTheRankGivesUpAtItsStartTimeoutNamingTheStoreAndTheReset(Drop reset) throws Exception {
        Drop[] always = new Drop[1000];
        Arrays.fill(always, reset);
        try (BusyProxy proxy = new BusyProxy(server.address(), always)) {
            InetSocketAddress at = proxy.address();
            KoloTimeoutException e = assertThrows(KoloTimeoutException.class,
                    () -> RendezvousClient.connect(at, secret, Duration.ofSeconds(1)));
            String m = e.getMessage();
            assertFalse(m.contains("\n"), m);
            assertTrue(m.startsWith("could not reach the rendezvous server at " + at.getAddress().getHostAddress() + ":"
                    + at.getPort() + " within 1 s: "), m);
            assertTrue(m.contains(" attempts (") && m.contains("the last: Connection reset"), m);
            assertTrue(proxy.accepted() > 1, m);
        }
    }

    /**
     * Stands between a client and the server: treats the first connections as {@code drops} says, then relays the
     * rest.
     */
    private static final class BusyProxy implements AutoCloseable {
        private final ServerSocket listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        private final Queue<Drop> drops;
        private final AtomicInteger accepted = new AtomicInteger();
        private final InetSocketAddress target;

        BusyProxy(InetSocketAddress target, Drop... drops) throws IOException {
            this.target = target;
            this.drops = new ArrayDeque<>(java.util.List.of(drops));
            Thread.ofPlatform().daemon().start(this::acceptLoop);
        }

        InetSocketAddress address() {
            return new InetSocketAddress(InetAddress.getLoopbackAddress(), listener.getLocalPort());
        }

        int accepted() {
            return accepted.get();
        }

        private void acceptLoop() {
            while (true) {
                Socket client;
                try {
                    client = listener.accept();
                } catch (IOException closed) {
                    return;
                }
                accepted.incrementAndGet();
                Drop drop = drops.poll();
                if (drop == Drop.RESET_AT_ACCEPT) {
                    // Here rather than on a thread of its own, so that the reset often reaches the client before its
                    // connect() has returned, as well as after (which of the two is up to the scheduler).
                    reset(client);
                } else {
                    Thread.ofPlatform().daemon().start(() -> handle(client, drop));
                }
            }
        }

        private void handle(Socket client, Drop drop) {
            try {
                if (drop == Drop.HANG_UP) {
                    client.close();
                } else if (drop == Drop.RESET_AFTER_HEADER) {
                    client.getInputStream().readNBytes(4 + 1 + 32 + 2);
                    reset(client);
                } else if (drop == Drop.SILENCE) {
                    client.getInputStream().transferTo(OutputStream.nullOutputStream());
                    client.close();
                } else {
                    relay(client);
                }
            } catch (IOException ignored) {
                // The client gave up on this connection.
            }
        }

        /** Closes with a linger of 0, so the client gets a TCP reset rather than an orderly close. */
        private static void reset(Socket client) {
            try {
                client.setSoLinger(true, 0);
                client.close();
            } catch (IOException ignored) {
                // Gone already.
            }
        }

        private void relay(Socket client) throws IOException {
            try (client; Socket server = new Socket(target.getAddress(), target.getPort())) {
                Thread back = Thread.ofPlatform().daemon().start(() -> pump(server, client));
                pump(client, server);
                back.join(5000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }

        private static void pump(Socket from, Socket to) {
            try {
                RecordingProxy.copy(from.getInputStream(), to, null);
            } catch (IOException ignored) {
                // One side went away.
            }
        }

        @Override
        public void close() throws IOException {
            listener.close();
        }
    }
}
