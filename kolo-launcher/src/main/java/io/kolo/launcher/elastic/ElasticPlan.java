package io.kolo.launcher.elastic;

import io.kolo.launcher.job.Display;
import io.kolo.launcher.job.JobPlan;
import io.kolo.launcher.start.RshAgent;
import io.kolo.launcher.start.Ssh;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;

/**
 * An elastic {@code kolo run} ready to start, validated without side effects.
 *
 * @param np             ranks to start with (at most {@code maxNp}, at least {@code minNp})
 * @param maxNp          {@link Integer#MAX_VALUE} when unbounded
 * @param resetLimit     null for no limit
 * @param cooldownMin    null: a blacklisted host stays out for good
 * @param hostFailures   failures of a host's workers before it is blacklisted
 * @param agent          the rsh agent that starts workers on other hosts in place of ssh, or null for ssh
 */
public record ElasticPlan(int np, int minNp, int maxNp, HostDiscovery discovery, Integer resetLimit, Duration elasticTimeout,
                   Duration cooldownMin, Duration cooldownMax, int hostFailures, List<String> command,
                   Map<String, String> exports, String workingDirectory, int startTimeoutSeconds, Ssh ssh,
                   String networkInterface, Predicate<String> isLocal, boolean verbose, Path outputDir,
                   List<String> warnings, Display display, RshAgent agent) implements JobPlan {
}
