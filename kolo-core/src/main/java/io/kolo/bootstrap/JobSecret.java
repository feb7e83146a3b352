package io.kolo.bootstrap;

import java.security.MessageDigest;
import java.util.HexFormat;

/**
 * The per-job secret ({@code KOLO_SECRET}, hex). Every connection proves knowledge of it with an HMAC over
 * a fresh challenge, so the secret itself never crosses the wire.
 */
public final class JobSecret {
    private final byte[] key;

    private JobSecret(byte[] key) {
        this.key = key.clone();
        // The JDK sets up its security providers on a digest's first use, reading files, and the random source is a
        // file too; under a flood of connections that exhausts the file descriptors, a first use then would fail.
        // Use both now, while nothing is listening yet.
        mac(new byte[0]);
        RandomBytes.fill(new byte[0]);
    }

    /** A fresh random 256-bit secret, as the launcher generates per job. */
    public static JobSecret generate() {
        byte[] key = new byte[32];
        RandomBytes.fill(key);
        return new JobSecret(key);
    }

    /** Parses the hex form used in {@code KOLO_SECRET}. */
    public static JobSecret fromHex(String hex) {
        if (hex == null || hex.isBlank()) {
            throw new IllegalArgumentException("KOLO_SECRET is empty: it must be the job's secret in hex (kolo run sets it)");
        }
        try {
            byte[] key = HexFormat.of().parseHex(hex.trim());
            if (key.length < 16) {
                throw new IllegalArgumentException("KOLO_SECRET is too short: use at least 32 hex digits (128 bits)");
            }
            return new JobSecret(key);
        } catch (IllegalArgumentException e) {
            if (e.getMessage() != null && e.getMessage().startsWith("KOLO_SECRET")) {
                throw e;
            }
            throw new IllegalArgumentException("KOLO_SECRET is not hex: " + e.getMessage(), e);
        }
    }

    /**
     * A secret of its own for one job, derived from this one (a user's long-lived secret): ranks that know
     * this secret and the job id agree on it, and a rank of another job does not.
     */
    public JobSecret derive(String jobId) {
        return new JobSecret(mac(("kolo job secret\n" + jobId).getBytes(java.nio.charset.StandardCharsets.UTF_8)));
    }

    /** The hex form, for {@code KOLO_SECRET}. Never log it. */
    public String toHex() {
        return HexFormat.of().formatHex(key);
    }

    /** A fresh random challenge. */
    public static byte[] newChallenge() {
        byte[] c = new byte[32];
        RandomBytes.fill(c);
        return c;
    }

    /** HMAC-SHA256 of {@code message} under this secret. */
    public byte[] mac(byte[] message) {
        return HmacSha256.mac(key, message);
    }

    /** Constant-time check that {@code proof} is this secret's HMAC of {@code message}. */
    public boolean verify(byte[] message, byte[] proof) {
        return MessageDigest.isEqual(mac(message), proof);
    }

    @Override
    public String toString() {
        return "JobSecret[hidden]";
    }
}
