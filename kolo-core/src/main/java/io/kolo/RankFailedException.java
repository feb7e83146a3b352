package io.kolo;

/**
 * Another rank died or became unreachable; every pending and later operation on this communicator
 * fails with this exception. {@link #failedRank()} names the rank, the message its cause where known
 * (for example "rank 2 exited with code 3").
 */
public class RankFailedException extends KoloException {
    private static final long serialVersionUID = 1L;
    /** The job rank that failed first. */
    private final int failedRank;

    /** @param failedRank the job rank that failed first */
    public RankFailedException(int failedRank, String message, Throwable cause) {
        super(message, cause);
        this.failedRank = failedRank;
    }

    /** The rank that failed first, as far as this rank can tell. */
    public int failedRank() {
        return failedRank;
    }
}
