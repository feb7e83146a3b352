package io.kolo.bootstrap;

import io.kolo.launch.JobSecret;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/**
 * Mutual authentication run on every new connection (rendezvous and data plane) before anything else is read from
 * it: both ends prove knowledge of the job secret, and the connecting end's identity claim ("rank 2 of 4 to rank 0")
 * is part of what it proves, so an authenticated connection cannot be relabelled.
 *
 * <pre>
 *   client -> server   MAGIC VERSION nonce_c claim
 *   server -> client   MAGIC VERSION nonce_s
 *   client -> server   HMAC(secret, "client" | purpose | claim | nonce_c | nonce_s)     checked before anything else
 *   server -> client   HMAC(secret, "server" | purpose | claim | nonce_c | nonce_s)     checked by the client
 * </pre>
 *
 * <p>Secure by construction rather than by checks: the server sends nothing derived from the secret until the client
 * has proved itself over the server's fresh nonce, so a stranger cannot obtain a proof to reflect or replay; the two
 * directions MAC different messages (the role comes first), so one side's proof is never valid for the other; the
 * purpose ("rendezvous", "data") keeps a proof for one kind of port from serving on another. Proofs are compared in
 * constant time. The whole exchange has one deadline, so a peer that trickles bytes cannot hold a connection open.
 *
 * <p>What it does not do: the traffic after the handshake is neither encrypted nor integrity-protected, so an attacker
 * on the network path can read it, or take over a connection after it authenticated (see docs/security.md).
 */
public final class Handshake {
    private static final int MAGIC = 0x4B4F4C4F; // "KOLO"
    private static final int VERSION = 2;
    private static final int NONCE = 32;
    private static final int PROOF = 32;
    private static final int MAX_CLAIM = 256;

    /** The peer did not prove knowledge of the job secret (or does not speak Kolo). */
    public static final class Rejected extends IOException {
        private static final long serialVersionUID = 1L;
        private final boolean notKolo;
        private final boolean hungUpFirst;

        Rejected(String message) {
            this(message, false, false);
        }

        Rejected(String message, boolean notKolo) {
            this(message, notKolo, false);
        }

        private Rejected(String message, boolean notKolo, boolean hungUpFirst) {
            super(message);
            this.notKolo = notKolo;
            this.hungUpFirst = hungUpFirst;
        }

        /** True when the peer sent no Kolo handshake at all (another protocol, or it hung up first). */
        public boolean notKolo() {
            return notKolo;
        }

        /**
         * True when the peer closed the connection before it had anything of this end's to judge: a server dropping
         * connections to make room, starting or closing, rather than one refusing this end. Worth trying again.
         */
        public boolean hungUpFirst() {
            return hungUpFirst;
        }
    }

    private Handshake() {
    }

    /** A fresh random challenge. */
    static byte[] newChallenge() {
        byte[] c = new byte[32];
        RandomBytes.fill(c);
        return c;
    }

    /**
     * The connecting end: claims {@code claim} and proves the secret; returns once the server proved it too.
     *
     * @throws Rejected               the server is not part of this job (or refused the claim)
     * @throws SocketTimeoutException the exchange did not finish within {@code timeout}
     */
    public static void client(Socket socket, JobSecret secret, String purpose, String claim, Duration timeout)
            throws IOException {
        Exchange x = new Exchange(socket, timeout);
        byte[] nonceC = Handshake.newChallenge();
        byte[] claimBytes = claim.getBytes(StandardCharsets.UTF_8);
        if (claimBytes.length > MAX_CLAIM) {
            throw new IllegalArgumentException("claim too long: " + claim);
        }
        x.write(header(nonceC, claimBytes));
        byte[] nonceS = readHeader(x);
        x.write(secret.mac(message("client", purpose, claimBytes, nonceC, nonceS)));
        byte[] proof;
        try {
            proof = x.read(PROOF, "the server's proof");
        } catch (Rejected e) {
            throw new Rejected("the server hung up after this end proved its job secret: it holds another secret"
                    + " (KOLO_SECRET differs: another job, or not the one its launcher generated), or refused the claim '"
                    + claim + "'");
        }
        if (!secret.verify(message("server", purpose, claimBytes, nonceC, nonceS), proof)) {
            throw new Rejected("the server failed to prove the job secret (another job, or not a Kolo process)");
        }
        x.done();
    }

    /**
     * The accepting end: returns the client's claim once the client proved the secret over this end's fresh nonce and
     * {@code accept} agreed to the claim; only then proves the secret in turn.
     *
     * @param accept checks the claim before this end answers; throws {@link Rejected} to refuse it
     */
    public static String server(Socket socket, JobSecret secret, String purpose, Duration timeout, ClaimCheck accept)
            throws IOException {
        Exchange x = new Exchange(socket, timeout);
        ServerSide side = new ServerSide(secret, purpose, accept);
        while (!side.done()) {
            byte[] reply = side.take(x.read(side.wanted(), side.reading()));
            if (reply != null) {
                x.write(reply);
            }
        }
        x.done();
        return side.claim();
    }

    /**
     * The accepting end's half of the exchange as steps over bytes, for a server that reads many connections from one
     * thread: {@link #wanted()} says how many bytes the next step needs, {@link #take} consumes exactly those and
     * returns what to send back (or null). It never needs more than {@link #MAX_CLIENT_BYTES} in all, so a server can
     * bound what an unauthenticated peer makes it hold.
     */
    public static final class ServerSide {
        /** Everything a client sends before it is authenticated: its header with the longest claim, and its proof. */
        public static final int MAX_CLIENT_BYTES = 5 + NONCE + 2 + MAX_CLAIM + PROOF;
        private static final int HEAD = 0;
        private static final int NONCE_AND_LENGTH = 1;
        private static final int CLAIM = 2;
        private static final int CLIENT_PROOF = 3;
        private static final int DONE = 4;

        private final JobSecret secret;
        private final String purpose;
        private final ClaimCheck accept;
        private int step = HEAD;
        private int claimLength;
        private byte[] nonceC;
        private byte[] claimBytes;
        private byte[] nonceS;
        private String claim;

        public ServerSide(JobSecret secret, String purpose, ClaimCheck accept) {
            this.secret = secret;
            this.purpose = purpose;
            this.accept = accept;
        }

        /** The bytes the next step needs (0 once done). */
        public int wanted() {
            return switch (step) {
                case HEAD -> 5;
                case NONCE_AND_LENGTH -> NONCE + 2;
                case CLAIM -> claimLength;
                case CLIENT_PROOF -> PROOF;
                default -> 0;
            };
        }

        /** What the next step reads, for the message when the peer stops sending. */
        public String reading() {
            return step == CLIENT_PROOF ? "the client's proof" : "the handshake";
        }

        public boolean done() {
            return step == DONE;
        }

        /** The client's claim, once {@link #done()}. */
        public String claim() {
            return claim;
        }

        /**
         * Consumes the {@link #wanted()} bytes of the next step.
         *
         * @return the bytes to send the client now, or null
         * @throws Rejected the client is not a Kolo peer, failed to prove the secret, or its claim was refused
         */
        public byte[] take(byte[] bytes) throws Rejected {
            if (bytes.length != wanted()) {
                throw new IllegalArgumentException("step wants " + wanted() + " bytes, got " + bytes.length);
            }
            switch (step) {
                case HEAD -> {
                    checkHead(ByteBuffer.wrap(bytes));
                    step = NONCE_AND_LENGTH;
                    return null;
                }
                case NONCE_AND_LENGTH -> {
                    ByteBuffer b = ByteBuffer.wrap(bytes);
                    nonceC = new byte[NONCE];
                    b.get(nonceC);
                    claimLength = b.getShort() & 0xFFFF;
                    if (claimLength > MAX_CLAIM) {
                        throw new Rejected("sent an oversized claim");
                    }
                    step = CLAIM;
                    return claimLength == 0 ? take(new byte[0]) : null;
                }
                case CLAIM -> {
                    claimBytes = bytes;
                    nonceS = Handshake.newChallenge();
                    step = CLIENT_PROOF;
                    return header(nonceS, null);
                }
                case CLIENT_PROOF -> {
                    if (!secret.verify(message("client", purpose, claimBytes, nonceC, nonceS), bytes)) {
                        throw new Rejected("failed to prove the job secret (wrong KOLO_SECRET, or not a Kolo process)");
                    }
                    String claimed = new String(claimBytes, StandardCharsets.UTF_8);
                    accept.check(claimed);
                    claim = claimed;
                    step = DONE;
                    return secret.mac(message("server", purpose, claimBytes, nonceC, nonceS));
                }
                default -> throw new IllegalStateException("the handshake is over");
            }
        }
    }

    /** Decides whether an authenticated client's claim may connect. */
    @FunctionalInterface
    public interface ClaimCheck {
        void check(String claim) throws Rejected;

        ClaimCheck ANY = claim -> { };
    }

    /** Refuses an authenticated claim (a duplicate rank, another job's size...). */
    public static Rejected refuse(String why) {
        return new Rejected(why);
    }

    private static byte[] header(byte[] nonce, byte[] claim) {
        ByteBuffer b = ByteBuffer.allocate(4 + 1 + NONCE + (claim == null ? 0 : 2 + claim.length));
        b.putInt(MAGIC).put((byte) VERSION).put(nonce);
        if (claim != null) {
            b.putShort((short) claim.length).put(claim);
        }
        return b.array();
    }

    /** Reads the server's header; returns its nonce. */
    private static byte[] readHeader(Exchange x) throws IOException {
        byte[] head;
        try {
            head = x.read(5, "the handshake");
        } catch (Rejected hungUp) {
            throw new Rejected(hungUp.getMessage(), true, true);
        }
        checkHead(ByteBuffer.wrap(head));
        return x.read(NONCE, "the handshake");
    }

    /** Checks a peer's magic and version. */
    private static void checkHead(ByteBuffer head) throws Rejected {
        if (head.getInt() != MAGIC) {
            throw new Rejected("does not speak the Kolo protocol", true);
        }
        int version = head.get();
        if (version != VERSION) {
            throw new Rejected("speaks Kolo handshake version " + version + ", not " + VERSION
                    + " (every rank and the launcher must run the same Kolo version)");
        }
    }

    private static byte[] message(String role, String purpose, byte[] claim, byte[] nonceC, byte[] nonceS) {
        ByteArrayOutputStream m = new ByteArrayOutputStream();
        m.writeBytes(("kolo-handshake-v" + VERSION + "\0" + role + "\0" + purpose + "\0").getBytes(StandardCharsets.UTF_8));
        m.write(claim.length >>> 8);
        m.write(claim.length);
        m.writeBytes(claim);
        m.writeBytes(nonceC);
        m.writeBytes(nonceS);
        return m.toByteArray();
    }

    /** Reads and writes with one deadline for the whole handshake, not one per read. */
    private static final class Exchange {
        private final Socket socket;
        private final InputStream in;
        private final OutputStream out;
        private final long deadline;
        private final int timeoutBefore;

        Exchange(Socket socket, Duration timeout) throws IOException {
            this.socket = socket;
            this.in = socket.getInputStream();
            this.out = socket.getOutputStream();
            this.deadline = System.nanoTime() + timeout.toNanos();
            this.timeoutBefore = socket.getSoTimeout();
        }

        void write(byte[] bytes) throws IOException {
            out.write(bytes);
            out.flush();
        }

        byte[] read(int n, String what) throws IOException {
            byte[] buf = new byte[n];
            int at = 0;
            while (at < n) {
                long leftMs = (deadline - System.nanoTime()) / 1_000_000;
                if (leftMs <= 0) {
                    throw new SocketTimeoutException("the handshake did not finish in time");
                }
                socket.setSoTimeout((int) Math.min(Integer.MAX_VALUE, leftMs));
                int got = in.read(buf, at, n - at);
                if (got < 0) {
                    throw new Rejected("closed the connection during " + what);
                }
                at += got;
            }
            return buf;
        }

        void done() throws IOException {
            socket.setSoTimeout(timeoutBefore);
        }
    }
}
