package io.kolo.launcher.start;

import java.util.List;
import java.util.Map;

/**
 * One of this node's ranks in a job with one launcher per node ({@code kolo run --nnodes}): a process on this host, as
 * {@link LocalStart}, named by its node, since every node's launcher reports the job's first failure.
 */
public record NodeStart(int node, String host) implements WorkerStart {

    @Override
    public List<String> command(List<String> program, String workingDirectory, Map<String, String> env) {
        return LocalStart.THIS_HOST.command(program, workingDirectory, env);
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
        return "rank " + rank + " on node " + node + " (" + host + ")";
    }
}
