package io.kolo.bootstrap;

import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;

/**
 * HMAC-SHA256 (RFC 2104) over the JDK's SHA-256 {@link MessageDigest}; {@code HmacSha256Test} checks it against
 * {@code javax.crypto.Mac} on RFC 4231's test vectors and random keys and messages. Not {@code Mac} itself: its first
 * use in a process loads and parses the JDK's cryptography policy files, which took a starting rank tens of
 * milliseconds on the way to its first collective, more than the rest of the handshake (docs/performance.md, "First
 * run"). The digest needs only the security providers.
 */
public final class HmacSha256 {
    private static final int BLOCK_BYTES = 64;
    private static final byte INNER_PAD = 0x36;
    private static final byte OUTER_PAD = 0x5c;

    private HmacSha256() {
    }

    /** The HMAC-SHA256 of {@code message} under {@code key}. */
    public static byte[] mac(byte[] key, byte[] message) {
        MessageDigest sha256 = sha256();
        byte[] k = key.length > BLOCK_BYTES ? sha256.digest(key) : key;
        byte[] inner = new byte[BLOCK_BYTES];
        byte[] outer = new byte[BLOCK_BYTES];
        for (int i = 0; i < BLOCK_BYTES; i++) {
            byte b = i < k.length ? k[i] : 0;
            inner[i] = (byte) (b ^ INNER_PAD);
            outer[i] = (byte) (b ^ OUTER_PAD);
        }
        sha256.update(inner);
        byte[] innerHash = sha256.digest(message);
        sha256.update(outer);
        return sha256.digest(innerHash);
    }

    private static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            // Every Java platform must provide SHA-256 (MessageDigest's specification).
            throw new IllegalStateException("SHA-256 unavailable in this JDK", e);
        }
    }
}
