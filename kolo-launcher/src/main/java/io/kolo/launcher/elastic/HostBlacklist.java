package io.kolo.launcher.elastic;

import io.kolo.launcher.job.Hosts;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * Which hosts an elastic job no longer uses because their workers failed. A host is excluded once it has failed
 * {@code failuresToExclude} times (1 with a discovery script, where another host can take its place; more on fixed
 * hosts, where a crashed rank is simply started again). With a cooldown range the exclusion lasts
 * {@code min * 2^(n-1)} seconds (capped at {@code max}) for its n-th exclusion, and the host is then tried again;
 * without one it lasts for good.
 */
final class HostBlacklist {
    private final int failuresToExclude;
    private final Duration cooldownMin;
    private final Duration cooldownMax;
    private final Map<String, Entry> hosts = new LinkedHashMap<>();

    private static final class Entry {
        int failures;
        int exclusions;
        long excludedUntilNanos;
        boolean forGood;
        boolean backReported = true;
    }

    /** @param cooldownMin null for exclusion for good */
    HostBlacklist(int failuresToExclude, Duration cooldownMin, Duration cooldownMax) {
        this.failuresToExclude = failuresToExclude;
        this.cooldownMin = cooldownMin;
        this.cooldownMax = cooldownMax;
    }

    /** Counts a failure on {@code host}; returns a phrase saying whether it is now excluded, or null. */
    String failed(String host, long nowNanos) {
        Entry e = hosts.computeIfAbsent(host, h -> new Entry());
        e.failures++;
        if (e.failures < failuresToExclude) {
            return null;
        }
        e.failures = 0;
        e.exclusions++;
        if (cooldownMin == null) {
            e.forGood = true;
            return "host " + host + " blacklisted";
        }
        long seconds = Math.min(cooldownMax.toSeconds(), cooldownMin.toSeconds() << Math.min(30, e.exclusions - 1));
        e.excludedUntilNanos = nowNanos + Duration.ofSeconds(seconds).toNanos();
        e.backReported = false;
        return "host " + host + " blacklisted for " + seconds + " s";
    }

    boolean excluded(String host, long nowNanos) {
        Entry e = hosts.get(host);
        return e != null && (e.forGood || e.excludedUntilNanos - nowNanos > 0);
    }

    /** Hosts whose cooldown has ended since the last call: the reset that uses them again says so. */
    List<String> cameBack(long nowNanos) {
        List<String> back = new ArrayList<>();
        hosts.forEach((host, e) -> {
            if (!e.backReported && !e.forGood && e.excludedUntilNanos - nowNanos <= 0) {
                e.backReported = true;
                back.add(host);
            }
        });
        return back;
    }

    /** Whether some excluded host will come back by itself (a cooldown is running). */
    boolean coolingDown(long nowNanos) {
        return hosts.values().stream().anyMatch(e -> !e.forGood && e.excludedUntilNanos - nowNanos > 0);
    }

    /** "h1, h2" of the hosts excluded now. */
    String describe(long nowNanos) {
        return hosts.keySet().stream().filter(h -> excluded(h, nowNanos)).collect(Collectors.joining(", "));
    }
}
