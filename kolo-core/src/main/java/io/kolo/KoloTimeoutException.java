package io.kolo;

/** A blocking wait ran past its timeout; the message says what was awaited from which rank. */
public class KoloTimeoutException extends KoloException {
    private static final long serialVersionUID = 1L;

    /** @param message what was awaited, and for how long */
    public KoloTimeoutException(String message) {
        super(message);
    }
}
