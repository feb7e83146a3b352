package io.kolo.launch;

import io.kolo.BadSettingException;
import io.kolo.Topology;
import io.kolo.bootstrap.JobEnvironment;
import io.kolo.bootstrap.KoloSettings;
import io.kolo.bootstrap.Placement;
import io.kolo.bootstrap.RankVariables;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * The {@code KOLO_*} variables of one rank, for a process manager that starts Kolo ranks itself (as threads or
 * processes) instead of through {@code kolo run}: where the rank sits in the job, where the job's
 * {@link RendezvousService} is, the job's {@link JobSecret}, timeouts and any other Kolo settings. The map is what
 * {@link io.kolo.Communicator#fromEnvironment(Map)} joins the job with (or a rank process's environment, for
 * {@code Kolo.init()}). It holds the secret: never log it.
 *
 * <pre>{@code
 * // Once per job, where the process manager decides things (a driver):
 * Map<String, String> settings = WorkerEnvironment.settingsFrom(System.getenv());   // KOLO_* checked here, once
 * JobSecret secret = JobSecret.generate();
 * RendezvousService store = RendezvousService.start(InetAddress.getByName("node-1"), 0, secret);
 * List<String> hosts = List.of("node-1", "node-1", "node-2");                          // the host of every rank
 *
 * // For rank r, on hosts.get(r):
 * Map<String, String> env = WorkerEnvironment.forRank(r, hosts)
 *         .rendezvous(store.address()).secret(secret)
 *         .startTimeout(Duration.ofSeconds(60))
 *         .settings(settings)
 *         .build();
 * try (Communicator comm = Communicator.fromEnvironment(env)) {
 *     comm.allreduce(gradients, ReduceOp.AVERAGE);
 * }
 * }</pre>
 *
 * <p>Ranks on one host talk through shared memory (ranks in one JVM too), ranks on different hosts over TCP; which
 * ranks share a host comes from {@link #forRank(int, List)}'s host names, or from {@link Builder#local} and
 * {@link Builder#cross}. Every mistake fails in {@link Builder#build()} or before, with one line naming it.
 */
public final class WorkerEnvironment {
    /** Decided per rank by the builder, never taken from a user's settings (a driver may itself run under kolo run). */
    private static final Set<String> PLACEMENT = RankVariables.PER_RANK;

    private WorkerEnvironment() {
    }

    /**
     * Rank {@code rank} of a job with one rank per entry of {@code hostOfEachRank} (its size), placed as Horovod and
     * {@code kolo run} place ranks: ranks with equal host names share a host, their local ranks in rank order; the
     * cross size is the number of ranks with this rank's local rank, the cross rank how many of those have a smaller
     * rank.
     *
     * @throws IllegalArgumentException when the rank is outside the list, or a host is null or blank
     */
    public static Builder forRank(int rank, List<String> hostOfEachRank) {
        Objects.requireNonNull(hostOfEachRank, "hostOfEachRank");
        List<Topology> placed = Placement.of(hostOfEachRank);
        if (rank < 0 || rank >= placed.size()) {
            throw new IllegalArgumentException("rank " + rank + " is outside a job of " + placed.size()
                    + " ranks (one host per rank given)");
        }
        Topology at = placed.get(rank);
        return new Builder(rank, at.size()).local(at.localRank(), at.localSize())
                .cross(at.crossRank(), at.crossSize()).hostname(hostOfEachRank.get(rank));
    }

    /**
     * Rank {@code rank} of a job of {@code size} ranks, all on one host unless {@link Builder#local} and
     * {@link Builder#cross} say otherwise.
     *
     * @throws IllegalArgumentException when {@code size < 1} or the rank is not in {@code [0, size)}
     */
    public static Builder forRank(int rank, int size) {
        if (size < 1) {
            throw new IllegalArgumentException("job size " + size + " is invalid: a job needs at least one rank");
        }
        if (rank < 0 || rank >= size) {
            throw new IllegalArgumentException("rank " + rank + " is outside a job of " + size + " ranks");
        }
        return new Builder(rank, size).local(rank, size).cross(0, 1);
    }

    /**
     * The Kolo settings of {@code env} that ranks should share: its {@code KOLO_*} variables less those the builder
     * decides per rank ({@link #placementVariables()}), checked, so that a bad value fails here, once, rather than in
     * every rank. Variables Kolo does not know pass unchecked (a program may use the prefix too).
     *
     * @throws BadSettingException naming the first bad variable (every bad one in the message)
     */
    public static Map<String, String> settingsFrom(Map<String, String> env) {
        Map<String, String> settings = new LinkedHashMap<>();
        env.forEach((k, v) -> {
            if (k.startsWith("KOLO_") && !PLACEMENT.contains(k) && v != null) {
                settings.put(k, v);
            }
        });
        check(settings);
        return Collections.unmodifiableMap(settings);
    }

    /** The variables the builder sets for each rank: placement, the rendezvous store and the secret. */
    public static Set<String> placementVariables() {
        return PLACEMENT;
    }

    /**
     * How long ranks wait for each other to join under {@code settings} ({@code KOLO_START_TIMEOUT_SECONDS}, 60 s by
     * default): how long a process manager should give its ranks to start, too.
     *
     * @throws BadSettingException when the value is malformed
     */
    public static Duration startTimeout(Map<String, String> settings) {
        return Duration.ofSeconds(KoloSettings.START_TIMEOUT_SECONDS.from(settings));
    }

    private static void check(Map<String, String> settings) {
        List<String> problems = KoloSettings.problems(settings);
        if (!problems.isEmpty()) {
            String first = problems.getFirst();
            throw new BadSettingException(first.substring(0, first.indexOf('=')), String.join("; ", problems));
        }
    }

    private static long wholeSeconds(String what, Duration d) {
        Objects.requireNonNull(d, what);
        if (d.isNegative() || d.isZero()) {
            throw new IllegalArgumentException(what + " " + d + " is invalid: expected a positive duration");
        }
        // Kolo's timeouts are whole seconds; round up so that a short timeout never becomes zero.
        return d.plusNanos(999_999_999).getSeconds();
    }

    /** One rank's variables; {@link #build()} checks them together. Not thread-safe. */
    public static final class Builder {
        private final int rank;
        private final int size;
        private final Map<String, String> settings = new LinkedHashMap<>();
        private int localRank;
        private int localSize;
        private int crossRank;
        private int crossSize;
        private String hostname;
        private String rendezvousHost;
        private int rendezvousPort;
        private JobSecret secret;
        private Long startTimeoutSeconds;
        private Long timeoutSeconds;

        private Builder(int rank, int size) {
            this.rank = rank;
            this.size = size;
        }

        /** This rank's index among the {@code localSize} ranks on its host. */
        public Builder local(int localRank, int localSize) {
            if (localSize < 1 || localSize > size || localRank < 0 || localRank >= localSize) {
                throw new IllegalArgumentException("local rank " + localRank + " of " + localSize + " is invalid:"
                        + " expected 0 <= local rank < local size <= the job size " + size);
            }
            this.localRank = localRank;
            this.localSize = localSize;
            return this;
        }

        /**
         * Horovod's cross coordinates: {@code crossSize} ranks of the job have this rank's local rank, and
         * {@code crossRank} of them have a smaller rank.
         */
        public Builder cross(int crossRank, int crossSize) {
            if (crossSize < 1 || crossSize > size || crossRank < 0 || crossRank >= crossSize) {
                throw new IllegalArgumentException("cross rank " + crossRank + " of " + crossSize + " is invalid:"
                        + " expected 0 <= cross rank < cross size <= the job size " + size);
            }
            this.crossRank = crossRank;
            this.crossSize = crossSize;
            return this;
        }

        /** The name this rank's host goes by in the job (its messages, the timeline); default: the machine's. */
        public Builder hostname(String name) {
            if (name == null || name.isBlank()) {
                throw new IllegalArgumentException("hostname is " + (name == null ? "null" : "blank")
                        + ": expected the name of this rank's host");
            }
            this.hostname = name;
            return this;
        }

        /**
         * Where the job's {@link RendezvousService} listens, usually its {@link RendezvousService#address()}. A
         * service bound to the wildcard address needs {@link #rendezvous(String, int)} with a host the ranks reach.
         */
        public Builder rendezvous(InetSocketAddress address) {
            Objects.requireNonNull(address, "address");
            if (address.getAddress() != null && address.getAddress().isAnyLocalAddress()) {
                throw new IllegalArgumentException("rendezvous address " + address.getAddress().getHostAddress()
                        + " is the wildcard: give a host the ranks can reach, rendezvous(host, " + address.getPort() + ")");
            }
            String host = address.getAddress() != null ? address.getAddress().getHostAddress() : address.getHostString();
            return rendezvous(host, address.getPort());
        }

        /** Where the job's {@link RendezvousService} listens: a host name or IP address the ranks reach, and its port. */
        public Builder rendezvous(String host, int port) {
            if (host == null || host.isBlank()) {
                throw new IllegalArgumentException("rendezvous host is " + (host == null ? "null" : "blank")
                        + ": expected the host name or IP address of the rendezvous service");
            }
            if (port < 1 || port > 65535) {
                throw new IllegalArgumentException("rendezvous port " + port + " is invalid: expected the TCP port the"
                        + " rendezvous service listens on, 1 to 65535 (RendezvousService.address() has it)");
            }
            this.rendezvousHost = host;
            this.rendezvousPort = port;
            return this;
        }

        /** The job's secret: the one its {@link RendezvousService} was started with. */
        public Builder secret(JobSecret secret) {
            this.secret = Objects.requireNonNull(secret, "secret");
            return this;
        }

        /** How long joining waits for the other ranks ({@code KOLO_START_TIMEOUT_SECONDS}; whole seconds, rounded up). */
        public Builder startTimeout(Duration timeout) {
            this.startTimeoutSeconds = wholeSeconds("startTimeout", timeout);
            return this;
        }

        /** How long a collective waits for a peer before the job fails ({@code KOLO_TIMEOUT_SECONDS}; rounded up). */
        public Builder timeout(Duration timeout) {
            this.timeoutSeconds = wholeSeconds("timeout", timeout);
            return this;
        }

        /**
         * Other Kolo settings for this rank ({@code KOLO_*}: engine, transports, ...; see docs/settings.md), e.g.
         * from {@link #settingsFrom}. {@link #startTimeout} and {@link #timeout} win over the same settings here.
         *
         * @throws IllegalArgumentException naming a placement variable ({@link #placementVariables()}): the builder
         *                                  decides those
         * @throws BadSettingException      naming the first bad value
         */
        public Builder settings(Map<String, String> values) {
            Objects.requireNonNull(values, "values");
            values.forEach((k, v) -> {
                Objects.requireNonNull(k, "a setting's name");
                Objects.requireNonNull(v, () -> "the value of setting " + k);
                if (PLACEMENT.contains(k)) {
                    throw new IllegalArgumentException(k + " is not a setting here: WorkerEnvironment decides the"
                            + " placement, rendezvous and secret variables (" + String.join(", ", PLACEMENT.stream()
                            .sorted().toList()) + ")");
                }
            });
            check(values);
            settings.putAll(values);
            return this;
        }

        /**
         * The variables, checked as the rank will read them.
         *
         * @throws IllegalStateException    when a job of more than one rank lacks the rendezvous address or the secret
         * @throws IllegalArgumentException naming the variable when the variables disagree (one line)
         */
        public Map<String, String> build() {
            if (size > 1 && rendezvousHost == null) {
                throw new IllegalStateException("rank " + rank + " of " + size + " needs the rendezvous service's"
                        + " address: call rendezvous(service.address())");
            }
            if (size > 1 && secret == null) {
                throw new IllegalStateException("rank " + rank + " of " + size + " needs the job's secret: call"
                        + " secret(...) with the secret the rendezvous service was started with");
            }
            RankVariables vars = RankVariables.of(new Topology(rank, size, localRank, localSize, crossRank, crossSize),
                    hostname);
            if (rendezvousHost != null) {
                // The service runs outside the ranks (in the embedder), so every rank, rank 0 too, is its client.
                vars.rendezvous(rendezvousHost, rendezvousPort);
            }
            if (secret != null) {
                vars.secret(secret);
            }
            if (startTimeoutSeconds != null) {
                vars.startTimeoutSeconds(startTimeoutSeconds);
            }
            if (timeoutSeconds != null) {
                vars.timeoutSeconds(timeoutSeconds);
            }
            Map<String, String> env = vars.over(settings);
            // The placement a rank reads back must be the one given here: parse it as the rank will, so that an
            // inconsistency (a host count above the job size, say) fails now, in the embedder, not in the rank.
            // KOLO_IFACE is left out: it names an interface of the rank's host, which need not be this one.
            Map<String, String> asRead = new LinkedHashMap<>(env);
            asRead.remove(KoloSettings.IFACE.name());
            JobEnvironment.from(asRead);
            return Collections.unmodifiableMap(env);
        }

        @Override
        public String toString() {
            return "WorkerEnvironment.Builder[rank " + rank + " of " + size + ", secret " + (secret == null ? "unset"
                    : "hidden") + "]";
        }
    }
}
