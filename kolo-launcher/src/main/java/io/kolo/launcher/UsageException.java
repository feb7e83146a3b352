package io.kolo.launcher;

/** A mistake on the command line; reported as one line and exit code 2, never as a stack trace. */
public final class UsageException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public UsageException(String message) {
        super(message);
    }
}
