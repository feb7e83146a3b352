package io.kolo.bootstrap;

/**
 * The one line that says why a rank failed, the same wherever it is printed (every rank, every launcher): "rank 2 on
 * host h2 failed: IllegalStateException: injected failure at iteration 20 (exit code 1)", from the rank's own last
 * words when it had any, else from its exit code, naming the signal that killed it.
 */
public final class RankFailure {
    private RankFailure() {
    }

    /**
     * @param where     "rank 2", "rank 2 on host h2"...
     * @param lastWords what the rank recorded before it ended (see {@link StoreKeys#lastWords}), or null
     * @param exitCode  its exit code, or null when unknown (a rank reporting another's failure without a launcher)
     */
    public static String describe(String where, String lastWords, Integer exitCode) {
        if (lastWords != null) {
            return where + " failed: " + lastWords + (exitCode == null ? "" : " (exit code " + exitCode + ")");
        }
        if (exitCode == null) {
            return where + " failed";
        }
        return where + " exited with code " + exitCode + signal(exitCode);
    }

    /** What an exit code above 128 says: the signal that ended the process, and its usual sender. */
    private static String signal(int code) {
        return switch (code) {
            case 137 -> " (killed by SIGKILL: the out-of-memory killer, a scheduler's hard limit, or kill -9)";
            case 143 -> " (terminated by SIGTERM)";
            case 139 -> " (SIGSEGV: a crash in native code)";
            case 134 -> " (SIGABRT: the process aborted, e.g. a JVM or native library error)";
            case 130 -> " (interrupted by SIGINT)";
            default -> "";
        };
    }
}
