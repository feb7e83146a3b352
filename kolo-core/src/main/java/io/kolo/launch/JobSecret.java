package io.kolo.launch;

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
    private final io.kolo.bootstrap.JobSecret secret;

    private JobSecret(io.kolo.bootstrap.JobSecret secret) {
        this.secret = secret;
    }

    /** A fresh random 256-bit secret. */
    public static JobSecret generate() {
        return new JobSecret(io.kolo.bootstrap.JobSecret.generate());
    }

    /**
     * Parses the hex form ({@link #toHex()}); surrounding whitespace is ignored.
     *
     * @throws IllegalArgumentException when {@code hex} is blank, not hex, or shorter than 32 digits (128 bits); the
     *                                  message never repeats the value
     */
    public static JobSecret fromHex(String hex) {
        return new JobSecret(io.kolo.bootstrap.JobSecret.fromHex(hex));
    }

    /**
     * A secret of its own derived from this one and {@code label} (e.g. a retry's attempt number): everyone who knows
     * this secret and the label derives the same secret, and a rank holding the secret of another label cannot join.
     */
    public JobSecret derive(String label) {
        Objects.requireNonNull(label, "label");
        return new JobSecret(secret.derive(label));
    }

    /** The hex form, as {@code KOLO_SECRET} holds it. Never log it. */
    public String toHex() {
        return secret.toHex();
    }

    io.kolo.bootstrap.JobSecret internal() {
        return secret;
    }

    @Override
    public String toString() {
        return "JobSecret[hidden]";
    }
}
