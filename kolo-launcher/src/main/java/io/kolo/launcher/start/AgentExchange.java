package io.kolo.launcher.start;

import javax.crypto.Cipher;
import javax.crypto.Mac;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.SecretKeySpec;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.Base64;
import java.util.HexFormat;

/**
 * The one exchange by which a rank started through an rsh agent (no stdin) gets its environment from the launcher,
 * both sides of it, and the heartbeat that follows on the same connection.
 *
 * <p>The rank's command line carries a one-time token (32 random bytes). The token itself never crosses the network:
 * the rank names it by a digest ({@link #id}), both sides send a fresh nonce, the rank proves it holds the token with an
 * HMAC over both nonces, and the launcher answers with the environment sealed with AES-GCM under a key derived from the
 * token and both nonces, which also proves to the rank that the answer comes from the token's issuer. The launcher
 * hands a token's environment out once, and only until the start timeout.
 *
 * <p>Then both sides send {@link #BEAT} every {@link #BEAT_INTERVAL}; a side that hears nothing for {@link #MISSED}
 * (or sees the connection close) takes the other for gone. The launcher may send {@link #STOP}; the rank agent sends
 * {@link #EXIT} and the rank's exit code when the rank has ended.
 */
final class AgentExchange {
    static final String GREETING = "KOLO-RANK-AGENT-1";
    static final Duration BEAT_INTERVAL = Duration.ofSeconds(1);
    /** Silence after which the other side counts as gone: several beats, for a loaded machine. */
    static final Duration MISSED = Duration.ofSeconds(6);
    static final int BEAT = 'B';
    static final int STOP = 'S';
    static final int EXIT = 'X';
    static final int ACCEPTED = 0;
    static final int REFUSED = 1;
    private static final int NONCE = 32;
    private static final int ID_LENGTH = 32;
    private static final int IV = 12;
    private static final int MAX_SEALED = 1 << 20;
    private static final SecureRandom RANDOM = new SecureRandom();

    private AgentExchange() {
    }

    /** A fresh token, as it appears on the rank's command line. */
    static String newToken() {
        byte[] t = new byte[32];
        RANDOM.nextBytes(t);
        return Base64.getUrlEncoder().withoutPadding().encodeToString(t);
    }

    /** What the rank sends to name its token: a digest that does not reveal it. */
    static String id(String token) {
        return HexFormat.of().formatHex(mac(token, "id".getBytes(StandardCharsets.UTF_8))).substring(0, ID_LENGTH);
    }

    static byte[] nonce() {
        byte[] n = new byte[NONCE];
        RANDOM.nextBytes(n);
        return n;
    }

    /** The rank's opening: greeting, the token's id and its nonce. */
    static void writeClaim(DataOutputStream out, String token, byte[] rankNonce) throws IOException {
        out.writeUTF(GREETING);
        out.writeUTF(id(token));
        out.write(rankNonce);
        out.flush();
    }

    /**
     * The launcher's side of the claim, before anything is known of the peer: reads no more than a real claim's size,
     * and throws at the first field that is longer or not this exchange.
     */
    static Claim readClaim(DataInputStream in) throws IOException {
        if (!GREETING.equals(readField(in, GREETING.length(), "greeting"))) {
            throw new IOException("not a rank agent's greeting");
        }
        String id = readField(in, ID_LENGTH, "token id");
        return new Claim(id, readNonce(in));
    }

    /** A rank agent's opening: the id of the token it claims to hold and its nonce. */
    record Claim(String id, byte[] rankNonce) {
    }

    /** A {@link DataOutputStream#writeUTF} field of at most {@code max} bytes; a longer one is refused unread. */
    private static String readField(DataInputStream in, int max, String what) throws IOException {
        int length = in.readUnsignedShort();
        if (length > max) {
            throw new IOException("a " + what + " of " + length + " bytes (at most " + max + ")");
        }
        byte[] bytes = new byte[length];
        in.readFully(bytes);
        return new String(bytes, StandardCharsets.UTF_8);
    }

    static byte[] readNonce(DataInputStream in) throws IOException {
        return in.readNBytes(NONCE);
    }

    /** The rank's proof that it holds the token, bound to both nonces. */
    static byte[] proof(String token, byte[] rankNonce, byte[] launcherNonce) {
        return mac(token, concat("claim".getBytes(StandardCharsets.UTF_8), rankNonce, launcherNonce));
    }

    static boolean proofMatches(String token, byte[] rankNonce, byte[] launcherNonce, byte[] proof) {
        return MessageDigest.isEqual(proof(token, rankNonce, launcherNonce), proof);
    }

    /** The launcher's answer: the environment line sealed for this exchange only. */
    static void writeSealed(DataOutputStream out, String token, byte[] rankNonce, byte[] launcherNonce, String text)
            throws IOException {
        byte[] iv = new byte[IV];
        RANDOM.nextBytes(iv);
        byte[] sealed = crypt(Cipher.ENCRYPT_MODE, token, rankNonce, launcherNonce, iv,
                text.getBytes(StandardCharsets.UTF_8));
        out.writeByte(ACCEPTED);
        out.write(iv);
        out.writeInt(sealed.length);
        out.write(sealed);
        out.flush();
    }

    /** The rank's side: the environment line, or an IOException naming why the launcher refused or failed. */
    static String readSealed(DataInputStream in, String token, byte[] rankNonce, byte[] launcherNonce)
            throws IOException {
        int status = in.readUnsignedByte();
        if (status != ACCEPTED) {
            throw new IOException("the launcher refused: " + in.readUTF());
        }
        byte[] iv = in.readNBytes(IV);
        int length = in.readInt();
        if (length < 0 || length > MAX_SEALED) {
            throw new IOException("the launcher's answer is malformed (" + length + " bytes)");
        }
        byte[] sealed = in.readNBytes(length);
        byte[] plain;
        try {
            plain = crypt(Cipher.DECRYPT_MODE, token, rankNonce, launcherNonce, iv, sealed);
        } catch (IOException e) {
            throw new IOException("the answer was not sealed with this rank's token (not the launcher that started"
                    + " it?)");
        }
        return new String(plain, StandardCharsets.UTF_8);
    }

    static void writeRefusal(DataOutputStream out, String why) throws IOException {
        out.writeByte(REFUSED);
        out.writeUTF(why);
        out.flush();
    }

    private static byte[] crypt(int mode, String token, byte[] rankNonce, byte[] launcherNonce, byte[] iv,
                                byte[] data) throws IOException {
        byte[] key = mac(token, concat("seal".getBytes(StandardCharsets.UTF_8), rankNonce, launcherNonce));
        try {
            Cipher c = Cipher.getInstance("AES/GCM/NoPadding");
            c.init(mode, new SecretKeySpec(key, "AES"), new GCMParameterSpec(128, iv));
            return c.doFinal(data);
        } catch (GeneralSecurityException e) {
            throw new IOException(e.getMessage(), e);
        }
    }

    private static byte[] mac(String token, byte[] data) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(token.getBytes(StandardCharsets.UTF_8), "HmacSHA256"));
            return mac.doFinal(data);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 is part of every JDK", e);
        }
    }

    private static byte[] concat(byte[]... parts) {
        int n = 0;
        for (byte[] p : parts) {
            n += p.length;
        }
        byte[] all = new byte[n];
        int at = 0;
        for (byte[] p : parts) {
            System.arraycopy(p, 0, all, at, p.length);
            at += p.length;
        }
        return all;
    }
}
