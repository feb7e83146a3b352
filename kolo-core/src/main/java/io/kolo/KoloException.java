package io.kolo;

/**
 * A collective could not complete. The message says what went wrong and, where it helps, what to do;
 * the same condition is reported on every rank.
 */
public class KoloException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** @param message what failed, and what to do, in one line */
    public KoloException(String message) {
        super(message);
    }

    /** @param message what failed, and what to do, in one line */
    public KoloException(String message, Throwable cause) {
        super(message, cause);
    }
}
