package io.kolo.launcher.start;

import java.util.List;
import java.util.Map;

/**
 * One worker to start: rank {@code rank} running {@code program} in {@code workingDirectory} with {@code env}, started
 * the way {@code start} says (on this host, over ssh, as a node's rank).
 */
public record RankLaunch(int rank, List<String> program, Map<String, String> env, String workingDirectory,
                  WorkerStart start) {
    public RankLaunch {
        program = List.copyOf(program);
        env = Map.copyOf(env);
    }

    /** A rank on this host, through the {@link RankWrapper}, so it dies with the launcher whatever kills it. */
    public static RankLaunch local(int rank, List<String> program, Map<String, String> env, String workingDirectory) {
        return new RankLaunch(rank, program, env, workingDirectory, LocalStart.THIS_HOST);
    }

    /** The argv that starts it. */
    public List<String> command() {
        return start.command(program, workingDirectory, env);
    }

    /** How the launcher's messages name it. */
    public String describe() {
        return start.describe(rank);
    }
}
