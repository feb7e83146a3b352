package io.kolo.launcher;

import io.kolo.launcher.elastic.ElasticPlan;
import io.kolo.launcher.elastic.HostDiscovery;
import io.kolo.launcher.job.Hosts;
import io.kolo.launcher.job.StaticPlan;
import io.kolo.launcher.job.UsageException;

import picocli.CommandLine.Option;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;

/**
 * horovodrun's elastic flags. {@code --min-np} (or {@code --max-np}, or a discovery script) makes the job elastic: a
 * failed worker no longer ends it; the launcher starts the next generation and the workers re-join under
 * {@code io.kolo.elastic.Elastic.run}.
 */
final class ElasticOptions {
    static final int DEFAULT_ELASTIC_TIMEOUT = 600;
    /** On fixed hosts a crashed rank is started again on its host; a host whose ranks keep failing is given up. */
    static final int FIXED_HOST_FAILURES = 3;

    @Option(names = "--min-np", paramLabel = "A",
            description = "Elastic: the fewest ranks the job runs with; a failed rank no longer ends it.")
    Integer minNp;

    @Option(names = "--max-np", paramLabel = "B", description = "Elastic: the most ranks (default: -np with fixed"
            + " hosts, unbounded with a discovery script).")
    Integer maxNp;

    @Option(names = "--host-discovery-script", paramLabel = "S",
            description = "Elastic: run every second; each output line 'host' or 'host:slots'.")
    String discoveryScript;

    @Option(names = "--slots-per-host", paramLabel = "K",
            description = "Slots of a discovered host printed without ':slots' (default: 1).")
    Integer slotsPerHost;

    @Option(names = "--reset-limit", paramLabel = "R", description = "Elastic: stop the job after R resets.")
    Integer resetLimit;

    @Option(names = "--elastic-timeout", paramLabel = "T",
            description = "Elastic: seconds to wait for --min-np slots (default: " + DEFAULT_ELASTIC_TIMEOUT + ").")
    Integer elasticTimeout;

    @Option(names = "--blacklist-cooldown-range", paramLabel = "MIN MAX", arity = "2",
            hideParamSyntax = true,
            description = "Elastic: a failing host comes back after MIN*2^(n-1) seconds, at most MAX (default: never).")
    List<Integer> cooldown;

    boolean given() {
        return minNp != null || maxNp != null || discoveryScript != null;
    }

    /** The bounds on their own, before they stand in for a missing -np and an error would name that instead. */
    void checkBounds() {
        if (minNp != null && minNp < 1) {
            throw new UsageException("--min-np must be at least 1, got " + minNp);
        }
        if (maxNp != null && maxNp < 1) {
            throw new UsageException("--max-np must be at least 1, got " + maxNp);
        }
        if (minNp != null && maxNp != null && maxNp < minNp) {
            throw new UsageException("--max-np " + maxNp + " is less than --min-np " + minNp);
        }
    }

    /**
     * The elastic flags given without --min-np, --max-np or a discovery script (as in horovodrun, the job is then not
     * elastic and they change nothing): one line each, for --verbose.
     */
    List<String> ignored() {
        if (given()) {
            return List.of();
        }
        List<String> lines = new ArrayList<>();
        String why = " ignored: the job is elastic only with --min-np, --max-np or --host-discovery-script";
        if (slotsPerHost != null) {
            lines.add("kolo: --slots-per-host " + slotsPerHost + why);
        }
        if (resetLimit != null) {
            lines.add("kolo: --reset-limit " + resetLimit + why);
        }
        if (elasticTimeout != null) {
            lines.add("kolo: --elastic-timeout " + elasticTimeout + why);
        }
        if (cooldown != null) {
            lines.add("kolo: --blacklist-cooldown-range " + cooldown.get(0) + " " + cooldown.get(1) + why);
        }
        return lines;
    }

    /**
     * The elastic plan: {@code base} is the run's plan for its first hosts (-H or hostfile; localhost:np without
     * either), used for the command, the exports and ssh.
     */
    ElasticPlan plan(Integer np, String hostsGiven, StaticPlan base, List<Hosts.Host> fixedHosts,
                     Predicate<String> isLocal) {
        if (discoveryScript != null && hostsGiven != null) {
            throw new UsageException("use either --host-discovery-script or -H/--hostfile, not both");
        }
        int slotsPerHost = this.slotsPerHost != null ? this.slotsPerHost : 1;
        int elasticTimeout = this.elasticTimeout != null ? this.elasticTimeout : DEFAULT_ELASTIC_TIMEOUT;
        if (slotsPerHost < 1) {
            throw new UsageException("--slots-per-host must be at least 1, got " + slotsPerHost);
        }
        int min = minNp != null ? minNp : np != null ? np : 1;
        int start = np != null ? np : min;
        int max = maxNp != null ? maxNp : discoveryScript != null ? Integer.MAX_VALUE : Math.max(start,
                Hosts.totalSlots(fixedHosts));
        if (min < 1) {
            throw new UsageException("--min-np must be at least 1, got " + min);
        }
        if (start < min || start > max) {
            throw new UsageException("-np " + start + " must lie between --min-np " + min + " and --max-np "
                    + (max == Integer.MAX_VALUE ? "(unbounded)" : max));
        }
        if (resetLimit != null && resetLimit < 0) {
            throw new UsageException("--reset-limit must be 0 or more, got " + resetLimit);
        }
        if (elasticTimeout < 1) {
            throw new UsageException("--elastic-timeout must be at least 1 second, got " + elasticTimeout);
        }
        Duration cooldownMin = null;
        Duration cooldownMax = null;
        if (cooldown != null) {
            if (cooldown.get(0) < 1 || cooldown.get(1) < cooldown.get(0)) {
                throw new UsageException("--blacklist-cooldown-range " + cooldown.get(0) + " " + cooldown.get(1)
                        + ": give MIN MAX seconds with 1 <= MIN <= MAX");
            }
            cooldownMin = Duration.ofSeconds(cooldown.get(0));
            cooldownMax = Duration.ofSeconds(cooldown.get(1));
        }
        HostDiscovery discovery = discoveryScript != null ? HostDiscovery.script(discoveryScript, slotsPerHost)
                : HostDiscovery.fixed(fixedHosts);
        int hostFailures = discoveryScript != null ? 1 : FIXED_HOST_FAILURES;
        return new ElasticPlan(start, min, max, discovery, resetLimit, Duration.ofSeconds(elasticTimeout), cooldownMin,
                cooldownMax, hostFailures, base.command(), Map.copyOf(base.exports()), base.workingDirectory(),
                base.startTimeoutSeconds(), base.ssh(), base.networkInterface(), isLocal, base.verbose(),
                base.outputDir(), base.warnings(), base.display(), base.agent());
    }
}
