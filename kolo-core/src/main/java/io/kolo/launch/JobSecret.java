package io.kolo.launch;

import io.kolo.bootstrap.HmacSha256;
import io.kolo.bootstrap.KoloSettings;
import io.kolo.bootstrap.RandomBytes;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.Objects;

/**
 * The secret of one Kolo job. Every connection of the job (the rendezvous store's and the ranks' own) proves knowledge
 * of it with an HMAC over a fresh challenge, so the secret itself never crosses Kolo's wire; it reaches the ranks only
 * through their environment ({@code KOLO_SECRET}, see {@link WorkerEnvironment}), which the embedder must deliver
 * over a channel it trusts. {@link #toString()} never shows it.
 *
 * <pre>{@code
 * JobSecret secret = JobSecret.generate();                      // fresh per job
 * JobSecret retry = secret.derive("stage 4 attempt 1");         // a job of its own for a retry, same on every rank
 * String hex = secret.toHex();                                  // to ship to a rank; never log it
 * }</pre>
 */
public final class JobSecret {
    /** The environment variable a rank, and each node's {@code kolo run --nnodes}, reads the secret from. */
    public static final String VARIABLE = KoloSettings.SECRET.name();

    private final byte[] key;

    private JobSecret(byte[] key) {
        this.key = key.clone();
        // The JDK sets up its security providers on a digest's first use, reading files, and the random source is a
        // file too; under a flood of connections that exhausts the file descriptors, a first use then would fail.
        // Use both now, while nothing is listening yet.
        mac(new byte[0]);
        RandomBytes.fill(new byte[0]);
    }

    /** A fresh random 256-bit secret. */
    public static JobSecret generate() {
        byte[] key = new byte[32];
        RandomBytes.fill(key);
        return new JobSecret(key);
    }

    /**
     * Parses the hex form ({@link #toHex()}, as {@code KOLO_SECRET} holds it); surrounding whitespace is ignored.
     *
     * @throws IllegalArgumentException when {@code hex} is blank, not hex, or shorter than 32 digits (128 bits); the
     *                                  message never repeats the value
     */
    public static JobSecret fromHex(String hex) {
        if (hex == null || hex.isBlank()) {
            throw new IllegalArgumentException("KOLO_SECRET is empty: it must be the job's secret in hex (kolo run sets it)");
        }
        byte[] key;
        try {
            key = HexFormat.of().parseHex(hex.trim());
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("KOLO_SECRET is not hex: " + e.getMessage(), e);
        }
        if (key.length < 16) {
            throw new IllegalArgumentException("KOLO_SECRET is too short: use at least 32 hex digits (128 bits)");
        }
        return new JobSecret(key);
    }

    /**
     * A secret of its own derived from this one and {@code label} (a retry's attempt, a job id under a user's
     * long-lived secret): everyone who knows this secret and the label derives the same secret, and a rank holding
     * the secret of another label cannot join.
     */
    public JobSecret derive(String label) {
        Objects.requireNonNull(label, "label");
        return new JobSecret(mac(("kolo job secret\n" + label).getBytes(StandardCharsets.UTF_8)));
    }

    /** The hex form, as {@code KOLO_SECRET} holds it. Never log it. */
    public String toHex() {
        return HexFormat.of().formatHex(key);
    }

    /**
     * HMAC-SHA256 of {@code message} under this secret: what a connection of the job sends to prove it knows the
     * secret without showing it.
     */
    public byte[] mac(byte[] message) {
        return HmacSha256.mac(key, message);
    }

    /** Whether {@code proof} is this secret's {@link #mac} of {@code message}, in constant time. */
    public boolean verify(byte[] message, byte[] proof) {
        return MessageDigest.isEqual(mac(message), proof);
    }

    @Override
    public String toString() {
        return "JobSecret[hidden]";
    }
}
