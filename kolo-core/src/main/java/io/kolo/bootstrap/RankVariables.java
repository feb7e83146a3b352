package io.kolo.bootstrap;

import io.kolo.Topology;
import io.kolo.launch.JobSecret;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * The one writer of the {@code KOLO_*} variables a launcher decides for one rank: where it sits ({@link Topology},
 * host name), where the job's rendezvous store is, the job's secret, timeouts, the interface, and an elastic worker's
 * id and generation. {@code kolo run} (static, elastic, {@code --nnodes}), {@code io.kolo.launch.WorkerEnvironment}
 * (embedders, kolo-spark) and an elastic worker moving to a new generation all write them here, with the names of
 * {@link KoloSettings}, so a variable one of them sets cannot be missing from another. Not thread-safe.
 */
public final class RankVariables {
    /** Where a rank sits: decided per rank, never taken from the user's settings. */
    public static final Set<String> PLACEMENT = names(KoloSettings.RANK, KoloSettings.SIZE, KoloSettings.LOCAL_RANK,
            KoloSettings.LOCAL_SIZE, KoloSettings.CROSS_RANK, KoloSettings.CROSS_SIZE, KoloSettings.HOSTNAME);
    /** {@link #PLACEMENT}, the rendezvous store's address and who serves it, and the secret. */
    public static final Set<String> PER_RANK = union(PLACEMENT, names(KoloSettings.RENDEZVOUS_ADDR,
            KoloSettings.RENDEZVOUS_PORT, KoloSettings.RENDEZVOUS_SERVER, KoloSettings.SECRET));
    /** What an elastic launcher adds for each worker. */
    public static final Set<String> ELASTIC = names(KoloSettings.ELASTIC_WORKER, KoloSettings.ELASTIC_GENERATION,
            KoloSettings.ELASTIC_TIMEOUT_SECONDS);

    private final Map<String, String> vars = new LinkedHashMap<>();

    private RankVariables(Topology at, String hostname) {
        Objects.requireNonNull(at, "at");
        put(KoloSettings.RANK, at.rank());
        put(KoloSettings.SIZE, at.size());
        put(KoloSettings.LOCAL_RANK, at.localRank());
        put(KoloSettings.LOCAL_SIZE, at.localSize());
        put(KoloSettings.CROSS_RANK, at.crossRank());
        put(KoloSettings.CROSS_SIZE, at.crossSize());
        if (hostname != null) {
            vars.put(KoloSettings.HOSTNAME.name(), hostname);
        }
    }

    /** The rank at {@code at}; {@code hostname} ({@code KOLO_HOSTNAME}) may be null: the machine's own name. */
    public static RankVariables of(Topology at, String hostname) {
        return new RankVariables(at, hostname);
    }

    /** The store the launcher serves at {@code host:port}: every rank, rank 0 too, is its client. */
    public RankVariables rendezvous(String host, int port) {
        vars.put(KoloSettings.RENDEZVOUS_ADDR.name(), Objects.requireNonNull(host, "host"));
        put(KoloSettings.RENDEZVOUS_PORT, port);
        vars.put(KoloSettings.RENDEZVOUS_SERVER.name(), "launcher");
        return this;
    }

    /** The job's secret, in hex. */
    public RankVariables secret(JobSecret secret) {
        vars.put(KoloSettings.SECRET.name(), secret.toHex());
        return this;
    }

    /** How long joining waits for the other ranks, in whole seconds (capped at {@link Integer#MAX_VALUE}). */
    public RankVariables startTimeoutSeconds(long seconds) {
        vars.put(KoloSettings.START_TIMEOUT_SECONDS.name(), Long.toString(Math.min(seconds, Integer.MAX_VALUE)));
        return this;
    }

    /** How long a collective waits for a peer, in whole seconds (capped at {@link Integer#MAX_VALUE}). */
    public RankVariables timeoutSeconds(long seconds) {
        vars.put(KoloSettings.TIMEOUT_SECONDS.name(), Long.toString(Math.min(seconds, Integer.MAX_VALUE)));
        return this;
    }

    /** The network interface (or address) of the rank's data plane. */
    public RankVariables networkInterface(String iface) {
        vars.put(KoloSettings.IFACE.name(), Objects.requireNonNull(iface, "iface"));
        return this;
    }

    /** An elastic worker's id, the generation it joins, and how long it waits for a next generation. */
    public RankVariables elastic(String worker, int generation, long timeoutSeconds) {
        vars.put(KoloSettings.ELASTIC_WORKER.name(), Objects.requireNonNull(worker, "worker"));
        put(KoloSettings.ELASTIC_GENERATION, generation);
        vars.put(KoloSettings.ELASTIC_TIMEOUT_SECONDS.name(), Long.toString(timeoutSeconds));
        return this;
    }

    /** The generation an elastic worker moves to (its id and timeout stay as they were). */
    public RankVariables generation(int generation) {
        put(KoloSettings.ELASTIC_GENERATION, generation);
        return this;
    }

    /** The variables, in a fixed order (placement first), as a new modifiable map. */
    public Map<String, String> toMap() {
        return new LinkedHashMap<>(vars);
    }

    /** {@code env} with these variables on top (they win over the same names there), as a new modifiable map. */
    public Map<String, String> over(Map<String, String> env) {
        Map<String, String> out = new LinkedHashMap<>(env);
        out.putAll(vars);
        return out;
    }

    private void put(KoloSettings.Setting<Integer> setting, int value) {
        vars.put(setting.name(), Integer.toString(value));
    }

    private static Set<String> names(KoloSettings.Setting<?>... settings) {
        return Stream.of(settings).map(KoloSettings.Setting::name).collect(Collectors.toUnmodifiableSet());
    }

    private static Set<String> union(Set<String> a, Set<String> b) {
        return Stream.concat(a.stream(), b.stream()).collect(Collectors.toUnmodifiableSet());
    }
}
