package io.kolo.bench;

/**
 * One job size of {@code kolo bench scale}: how the ranks ran, and what was measured, or why it stopped. Times are the
 * slowest rank's; "per rank" figures are the job's total divided by its ranks (threads share one process) or the
 * mean of the ranks' own readings (processes). NaN where not measured.
 */
record ScaleStep(int ranks, String mode, String status, String reason, double wallSeconds, double initMs,
                 double firstOpMs, double smallUs, double largeUs, double storeRequestsPerRank,
                 double storeBytesPerRank, double fdsPerRank, double socketFdsPerRank, double heapBytesPerRank,
                 double rssBytesPerRank, double shmBytesPerRank) {
    static final String OK = "ok";
    static final String FAILED = "failed";
    static final String TIMED_OUT = "timed out";

    static ScaleStep failed(int ranks, String mode, String status, String reason, double wallSeconds) {
        double nan = Double.NaN;
        return new ScaleStep(ranks, mode, status, reason, wallSeconds, nan, nan, nan, nan, nan, nan, nan, nan, nan,
                nan, nan);
    }

    boolean ok() {
        return status.equals(OK);
    }
}
