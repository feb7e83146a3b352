package io.kolo.launcher.start;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.BufferedInputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The launcher's agent office against peers that connect but never prove a token, over real loopback sockets: it
 * holds at most a bounded number of them, each for a bounded time, and reads no more of them than a claim's size;
 * a real rank agent still gets its settings while strangers crowd the port.
 */
@Timeout(60)
class AgentOfficeStrangersTest {
    private static final int MAX_PENDING = 8;
    private final List<Socket> opened = new ArrayList<>();
    private AgentOffice office;

    @AfterEach
    void close() throws IOException {
        for (Socket s : opened) {
            s.close();
        }
        if (office != null) {
            office.close();
        }
    }

    private void open(Duration handshake) throws IOException {
        office = AgentOffice.open(InetAddress.getLoopbackAddress(), Duration.ofMinutes(1), misuse -> { },
                handshake, MAX_PENDING);
    }

    private Socket connect() throws IOException {
        String address = office.addresses();
        int colon = address.lastIndexOf(':');
        Socket s = new Socket(InetAddress.getLoopbackAddress(), Integer.parseInt(address.substring(colon + 1)));
        opened.add(s);
        return s;
    }

    /** Whether the office closes {@code s} within {@code within} (it never sends a stranger anything first). */
    private static boolean closedByOffice(Socket s, Duration within) throws IOException {
        s.setSoTimeout((int) within.toMillis());
        try {
            return s.getInputStream().read() < 0;
        } catch (SocketTimeoutException e) {
            return false;
        } catch (SocketException reset) {
            return true;
        }
    }

    @Test
    void strangersBeyondTheBoundPushOutTheOldestAndARankStillGetsItsSettings() throws Exception {
        open(Duration.ofMinutes(1));
        int strangers = MAX_PENDING + 12;
        List<Socket> idle = new ArrayList<>();
        for (int i = 0; i < strangers; i++) {
            idle.add(connect());
        }
        int closed = 0;
        for (Socket s : idle) {
            if (closedByOffice(s, Duration.ofMillis(300))) {
                closed++;
            }
        }
        assertTrue(closed >= strangers - MAX_PENDING, "the office closed " + closed + " of " + strangers
                + " idle strangers; it may hold " + MAX_PENDING);

        AgentOffice.Ticket ticket = office.issue("host-a", Map.of("KOLO_RANK", "0", "A", "b c"));
        Socket rank = connect();
        rank.setSoTimeout(10_000);
        DataInputStream in = new DataInputStream(new BufferedInputStream(rank.getInputStream()));
        DataOutputStream out = new DataOutputStream(rank.getOutputStream());
        byte[] rankNonce = AgentExchange.nonce();
        AgentExchange.writeClaim(out, ticket.token, rankNonce);
        byte[] launcherNonce = AgentExchange.readNonce(in);
        out.write(AgentExchange.proof(ticket.token, rankNonce, launcherNonce));
        out.flush();
        String env = AgentExchange.readSealed(in, ticket.token, rankNonce, launcherNonce);
        assertTrue(env.contains("KOLO_RANK") && env.contains("b c"), env);
        assertTrue(ticket.claimed());
    }

    @Test
    void aStrangerWhoTricklesItsClaimIsClosedAtTheHandshakesDeadline() throws Exception {
        open(Duration.ofSeconds(1));
        Socket s = connect();
        OutputStream out = s.getOutputStream();
        byte[] claim = claimBytes(AgentExchange.GREETING, "0".repeat(32));
        long start = System.nanoTime();
        boolean closed = false;
        // One byte every 200 ms: every read of the office is answered well within a read timeout.
        for (int i = 0; i < claim.length && !closed; i++) {
            try {
                out.write(claim[i]);
                out.flush();
            } catch (SocketException gone) {
                closed = true;
                break;
            }
            closed = closedByOffice(s, Duration.ofMillis(200));
        }
        Duration took = Duration.ofNanos(System.nanoTime() - start);
        assertTrue(closed, "the office still held a trickling stranger after " + took.toMillis() + " ms");
        assertTrue(took.compareTo(Duration.ofSeconds(4)) < 0, "closed only after " + took.toMillis() + " ms");
    }

    @Test
    void aClaimLongerThanAnyRealOneIsRefusedBeforeItIsRead() throws Exception {
        open(Duration.ofMinutes(1));
        for (String field : List.of("greeting", "id")) {
            Socket s = connect();
            DataOutputStream out = new DataOutputStream(s.getOutputStream());
            if (field.equals("id")) {
                out.writeUTF(AgentExchange.GREETING);
            }
            // Announces 60,000 bytes and sends none: the office must not wait for them.
            out.writeShort(60_000);
            out.flush();
            assertTrue(closedByOffice(s, Duration.ofSeconds(5)), "the office waited for a 60,000-byte " + field);
        }
    }

    private static byte[] claimBytes(String greeting, String id) throws IOException {
        java.io.ByteArrayOutputStream b = new java.io.ByteArrayOutputStream();
        DataOutputStream d = new DataOutputStream(b);
        d.writeUTF(greeting);
        d.writeUTF(id);
        d.write(new byte[32]);
        assertEquals(2 + greeting.getBytes(StandardCharsets.UTF_8).length + 2 + id.length() + 32, b.size());
        return b.toByteArray();
    }
}
