package io.kolo;

/**
 * A collective could not complete. The message says what went wrong and, where it helps, what to do;
 * the same condition is reported on every rank.
 */
public class KoloException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public KoloException(String message) {
        super(message);
    }

    public KoloException(String message, Throwable cause) {
        super(message, cause);
    }
}
