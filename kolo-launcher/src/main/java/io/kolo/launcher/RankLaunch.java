package io.kolo.launcher;

import java.util.List;
import java.util.Map;

/**
 * How to start one rank running {@code program}: {@code command} (the program in its wrapper, or the ssh command
 * that runs it elsewhere) with {@code env} added, {@code stdin} written to it and kept open (the wrapper's
 * environment line; the rank ends when it closes), on {@code host} when that is another host.
 */
record RankLaunch(int rank, List<String> program, List<String> command, Map<String, String> env, String host,
                  String stdin, String workingDirectory) {
    RankLaunch(int rank, List<String> program, List<String> command, Map<String, String> env, String host,
               String stdin) {
        this(rank, program, command, env, host, stdin, null);
    }

    /** A rank on this host, through the {@link RankWrapper}, so it dies with the launcher whatever kills it. */
    static RankLaunch local(int rank, List<String> program, Map<String, String> env, String workingDirectory) {
        return new RankLaunch(rank, program, RankWrapper.localCommand(workingDirectory, program), Map.of(), null,
                RankWrapper.environmentLine(env), workingDirectory);
    }

    /** A rank on {@code host}, started by {@code ssh} (the wrapper there reads {@code envLine} from stdin). */
    static RankLaunch remote(int rank, List<String> program, List<String> ssh, String host, String envLine) {
        return new RankLaunch(rank, program, ssh, Map.of(), host, envLine);
    }

    boolean remote() {
        return host != null;
    }
}
