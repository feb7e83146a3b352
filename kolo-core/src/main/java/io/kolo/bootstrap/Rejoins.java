package io.kolo.bootstrap;

import io.kolo.launch.JobSecret;

import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * How often this process has joined one launcher's job as one rank: {@code Kolo.init()} again after
 * {@code Kolo.shutdown()} (as Horovod allows) joins the same store, which still holds the last job's data-plane keys.
 * Every rank of a job shuts down and joins in step, so each counts the same joins and they meet under the same keys.
 * Counted per store, secret and rank: ranks of several jobs, or several ranks of one, may share a JVM.
 */
final class Rejoins {
    private static final Map<String, Integer> JOINS = new ConcurrentHashMap<>();

    private Rejoins() {
    }

    /** How many times this process joined the job of {@code store} and {@code secret} as {@code rank} before now. */
    static int count(InetSocketAddress store, JobSecret secret, int rank) {
        // A digest of the secret rather than the secret itself: the map lives as long as the JVM.
        String key = store + " " + rank + " "
                + HexFormat.of().formatHex(secret.mac("kolo rejoins".getBytes(StandardCharsets.UTF_8)));
        return JOINS.merge(key, 1, Integer::sum) - 1;
    }

    /** Join {@code join}'s part of {@code store}. */
    static KeyValueStore scope(KeyValueStore store, int join) {
        return new PrefixedStore(store, "rejoin" + join + "/");
    }

    /** The secret join {@code join}'s data connections (and shared-memory segment names) prove. */
    static JobSecret secret(JobSecret jobSecret, int join) {
        return JobSecret.fromHex(HexFormat.of().formatHex(
                jobSecret.mac(("kolo rejoin " + join).getBytes(StandardCharsets.UTF_8))));
    }
}
