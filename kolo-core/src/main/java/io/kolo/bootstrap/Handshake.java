package io.kolo.bootstrap;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * Mutual HMAC challenge-response run on every new connection (rendezvous and data plane) before anything
 * else is read from it. Each side sends a random challenge and must return the other side's challenge
 * MAC-ed with the job secret, bound to a purpose string so a proof for one kind of port can't be replayed
 * on another. A peer that fails gets {@link Rejected}; the caller closes the socket and logs it.
 *
 * <p>Runs on blocking sockets with an SO_TIMEOUT set by the caller, so a silent stranger can't hold it.
 */
public final class Handshake {
    private static final int MAGIC = 0x4B4F4C4F; // "KOLO"
    private static final int CHALLENGE = 32;
    private static final int PROOF = 32;

    /** The peer did not prove knowledge of the job secret (or does not speak Kolo). */
    public static final class Rejected extends IOException {
        private static final long serialVersionUID = 1L;

        Rejected(String message) {
            super(message);
        }
    }

    private Handshake() {
    }

    /**
     * Runs the handshake on an already connected socket, symmetric for both ends. {@code purpose} names the
     * port kind ("rendezvous", "data") and must match on both ends. Returns normally only when the peer
     * proved the secret; also proves it to the peer.
     */
    public static void run(Socket socket, JobSecret secret, String purpose) throws IOException {
        DataOutputStream out = new DataOutputStream(socket.getOutputStream());
        DataInputStream in = new DataInputStream(socket.getInputStream());
        byte[] mine = JobSecret.newChallenge();
        out.writeInt(MAGIC);
        out.write(mine);
        out.flush();
        if (in.readInt() != MAGIC) {
            throw new Rejected("peer does not speak the Kolo protocol");
        }
        byte[] theirs = in.readNBytes(CHALLENGE);
        if (theirs.length != CHALLENGE) {
            throw new Rejected("peer closed the connection during the handshake");
        }
        if (Arrays.equals(mine, theirs)) {
            throw new Rejected("peer echoed our challenge (reflection attempt)");
        }
        out.write(secret.mac(bind(purpose, theirs)));
        out.flush();
        byte[] proof = in.readNBytes(PROOF);
        if (proof.length != PROOF || !secret.verify(bind(purpose, mine), proof)) {
            throw new Rejected("peer failed to prove the job secret (wrong KOLO_SECRET or not a Kolo rank)");
        }
    }

    private static byte[] bind(String purpose, byte[] challenge) {
        byte[] p = purpose.getBytes(StandardCharsets.UTF_8);
        byte[] msg = Arrays.copyOf(p, p.length + challenge.length);
        System.arraycopy(challenge, 0, msg, p.length, challenge.length);
        return msg;
    }
}
