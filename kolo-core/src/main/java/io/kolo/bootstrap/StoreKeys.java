package io.kolo.bootstrap;

/**
 * Every key of the job's rendezvous store, in one place for the ranks and the launcher alike: a key written in one
 * module and read in another cannot drift apart.
 */
public final class StoreKeys {
    /** The job's first failure, as {@link #firstFailure(int, String)} encodes it. */
    public static final String FIRST_FAILURE = "failure";

    private StoreKeys() {
    }

    /** Why {@code rank} failed, as the launcher (exit code) or the rank itself (a timeout, an internal error) saw it. */
    public static String failed(int rank) {
        return "failed/" + rank;
    }

    /** {@code rank}'s last words: the first line of the exception that ended it, or where it called System.exit. */
    public static String lastWords(int rank) {
        return "cause/" + rank;
    }

    /**
     * The first rank of the job to record its last words, as {@link #firstFailure(int, String)} encodes it (the rank,
     * its words): one key that ranks waiting for a failure can watch, whatever the job's size, where no launcher
     * records exits (mpirun, srun).
     */
    public static final String FIRST_LAST_WORDS = "cause/first";

    /** The value of {@link #FIRST_FAILURE}: the rank, a tab, the cause. */
    public static String firstFailure(int rank, String cause) {
        return rank + "\t" + cause;
    }

    /** What every rank's {@link #address(int)} starts with, for reading them all at once ({@code getEach}). */
    public static final String ADDRESSES = "addr/";

    /** What every rank's {@link #host(int)} starts with. */
    public static final String HOSTS = "host/";

    /** {@code rank}'s data-plane address, host:port. */
    public static String address(int rank) {
        return ADDRESSES + rank;
    }

    /** The host identity {@code rank} runs on (which ranks share memory). */
    public static String host(int rank) {
        return HOSTS + rank;
    }

    /** The peer {@code rank}'s exchange has long waited on, or "-" (see {@code StallWatch}). */
    public static String stalledOn(int rank) {
        return "stalled/" + rank;
    }

    /**
     * What the shared-memory keys of {@code leader}'s host start with ({@code leader} is the host's lowest rank):
     * {@code <prefix>file/<i>} is the {@code i}-th rank of the host's segment and probe, {@code <prefix>mapped/<i>} says
     * that it has mapped every other segment of the host and which of their memory it may read; each read at once by
     * every rank of the host ({@code getEach}).
     */
    public static String shmHost(int leader) {
        return "shm/" + leader + "/";
    }

    /** The ring size the ranks of {@code leader}'s host agreed on. */
    public static String shmRing(int leader) {
        return "shm/ring/" + leader;
    }

    /** Node {@code node}'s launcher is alive (a counter it advances). */
    public static String nodeBeat(int node) {
        return "node/" + node + "/beat";
    }

    /** Node {@code node}'s launcher finished, with this exit code. */
    public static String nodeDone(int node) {
        return "node/" + node + "/done";
    }

    /** {@code rank}'s latest {@code io.kolo.view.RankSnapshot}, which its reporter rewrites while the job view is on. */
    public static String view(int rank) {
        return "view/" + rank;
    }
}
