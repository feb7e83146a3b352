package io.kolo.launcher.job;

/** A mistake on the command line; reported as one line and exit code 2, never as a stack trace. */
public final class UsageException extends RuntimeException {
    /** The exit code of a usage error. */
    public static final int EXIT_CODE = 2;

    private static final long serialVersionUID = 1L;

    public UsageException(String message) {
        super(message);
    }
}
