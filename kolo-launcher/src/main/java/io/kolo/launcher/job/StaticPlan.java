package io.kolo.launcher.job;

import io.kolo.launcher.start.RshAgent;
import io.kolo.launcher.start.Ssh;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * A static {@code kolo run} job (fixed ranks on fixed hosts), everything validated and resolved, ready to start; built
 * without side effects so it can be tested.
 *
 * @param agent the rsh agent that starts the ranks on {@code remoteHosts} in place of ssh, or null for ssh
 */
public record StaticPlan(int np, List<RankMap.Slot> slots, List<String> command, Map<String, String> exports,
        List<String> warnings, Path outputDir, int startTimeoutSeconds, boolean verbose, List<String> remoteHosts,
        Ssh ssh, String networkInterface, String workingDirectory, Display display, RshAgent agent) implements JobPlan {
    public StaticPlan {
        remoteHosts = List.copyOf(remoteHosts);
    }
}
