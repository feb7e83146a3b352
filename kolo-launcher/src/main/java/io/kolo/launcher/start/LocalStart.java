package io.kolo.launcher.start;

import java.util.List;
import java.util.Map;

/**
 * A worker on this host, through the {@link RankWrapper} in a session of its own, so it dies with the launcher
 * whatever kills it.
 *
 * @param host the host name messages give it (an elastic job names every worker's host), or null for none
 */
public record LocalStart(String host) implements WorkerStart {
    /** A rank of a static job on the launcher's host, named by its rank alone. */
    public static final LocalStart THIS_HOST = new LocalStart(null);

    @Override
    public List<String> command(List<String> program, String workingDirectory, Map<String, String> env) {
        return RankWrapper.localCommand(workingDirectory, program);
    }

    @Override
    public boolean offersStdin() {
        return true;
    }

    @Override
    public boolean remote() {
        return false;
    }

    @Override
    public String describe(int rank) {
        return "rank " + rank + (host != null ? " on host " + host : "");
    }
}
