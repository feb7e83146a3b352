package io.kolo.spark;

import io.kolo.RankFailedException;

/**
 * What a rank's Spark task throws when the job failed on it: "rank 1 of 3 failed: IllegalStateException: bad row", the
 * line the driver's {@link KoloSparkException} repeats, with the rank's own exception as the cause. Spark reports
 * whichever task failed first, which may be a rank that only saw another fail; such a rank names the rank that failed
 * and its cause, so the driver's line is the same whichever task Spark reports.
 */
final class RankTaskFailure extends RuntimeException {
    private static final long serialVersionUID = 1L;

    RankTaskFailure(int rank, int size, Throwable cause) {
        super(describe(rank, size, cause), cause);
    }

    private static String describe(int rank, int size, Throwable cause) {
        for (Throwable t = cause; t != null; t = t.getCause()) {
            if (t instanceof RankFailedException other && other.failedRank() != rank) {
                String message = String.valueOf(other.getMessage());
                String named = "rank " + other.failedRank() + " ";
                int at = message.indexOf(named);
                String why = at >= 0 ? message.substring(at + named.length()) : "failed: " + message;
                return "rank " + other.failedRank() + " of " + size + " " + firstLine(why) + " (seen by rank " + rank
                        + ")";
            }
        }
        return "rank " + rank + " of " + size + " failed: " + firstLine(describe(cause));
    }

    /** The type and the first line of the message: one line, as Kolo reports a failed rank elsewhere. */
    static String describe(Throwable error) {
        String message = error.getMessage();
        String first = message == null ? "" : firstLine(message);
        return error.getClass().getSimpleName() + (first.isEmpty() ? "" : ": " + first);
    }

    private static String firstLine(String s) {
        return s.strip().lines().findFirst().orElse("");
    }
}
