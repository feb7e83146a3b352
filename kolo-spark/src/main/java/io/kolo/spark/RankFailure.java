package io.kolo.spark;

/**
 * What a rank's Spark task throws when its work failed: "rank 1 of 3 failed: IllegalStateException: bad row", the
 * line the driver's {@link KoloSparkException} repeats, with the rank's own exception as the cause.
 */
final class RankFailure extends RuntimeException {
    private static final long serialVersionUID = 1L;

    RankFailure(int rank, int size, Throwable cause) {
        super("rank " + rank + " of " + size + " failed: " + describe(cause), cause);
    }

    /** The type and the first line of the message: one line, as Kolo reports a failed rank elsewhere. */
    static String describe(Throwable error) {
        String message = error.getMessage();
        String first = message == null ? "" : message.strip().lines().findFirst().orElse("");
        return error.getClass().getSimpleName() + (first.isEmpty() ? "" : ": " + first);
    }
}
