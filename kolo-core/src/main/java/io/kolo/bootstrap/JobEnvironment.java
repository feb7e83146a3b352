package io.kolo.bootstrap;

import io.kolo.BadSettingException;
import io.kolo.Topology;
import io.kolo.launch.JobSecret;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Where this process sits in the job and how to reach the others, parsed from environment variables.
 *
 * <p>Placement comes from {@code KOLO_RANK}, {@code KOLO_SIZE}, {@code KOLO_LOCAL_RANK},
 * {@code KOLO_LOCAL_SIZE}, {@code KOLO_CROSS_RANK}, {@code KOLO_CROSS_SIZE} (set by {@code kolo run});
 * without {@code KOLO_RANK} it falls back to Open MPI, then MPICH/Intel MPI, then Slurm variables, and
 * finally to a single process (rank 0 of 1). Every missing or invalid value fails with a
 * {@link BadSettingException} naming the variable, the value and what is expected: {@code Kolo.init()} then ends the
 * rank with that one line, as a launcher does for a bad flag.
 *
 * @param rank             this process's rank, 0 &lt;= rank &lt; size
 * @param size             number of ranks in the job
 * @param localRank        rank among the processes on this host
 * @param localSize        number of processes on this host
 * @param crossRank        how many ranks with this local rank have a smaller rank (Horovod's; see {@link Placement})
 * @param crossSize        number of ranks with this local rank
 * @param rendezvousHost   {@code KOLO_RENDEZVOUS_ADDR}, default {@code 127.0.0.1}
 * @param rendezvousPort   {@code KOLO_RENDEZVOUS_PORT}; 0 when absent (allowed only for a single process, or
 *                         under mpirun/mpiexec/srun, where {@link Rendezvous} finds the store)
 * @param rendezvousServer who serves the rendezvous store ({@code KOLO_RENDEZVOUS_SERVER})
 * @param secret           {@code KOLO_SECRET}; empty only for a single process without one, or under
 *                         mpirun/mpiexec/srun (see {@link Rendezvous})
 * @param bindAddress      data-plane address from {@code KOLO_IFACE}, default 127.0.0.1; ranks use
 *                         {@link AdvertisedAddress#choose} (which routes to the store when it is unset)
 * @param startTimeout     {@code KOLO_START_TIMEOUT_SECONDS}, default 60 s
 * @param timeout          {@code KOLO_TIMEOUT_SECONDS}, default 300 s
 * @param env              the raw variables, for settings parsed elsewhere
 */
public record JobEnvironment(int rank, int size, int localRank, int localSize, int crossRank, int crossSize,
                             String rendezvousHost, int rendezvousPort, RendezvousServer rendezvousServer,
                             Optional<JobSecret> secret, InetAddress bindAddress,
                             Duration startTimeout, Duration timeout, Map<String, String> env) {

    /** Who serves the rendezvous store. */
    public enum RendezvousServer {
        /** {@code kolo run} serves it; ranks are clients. */
        LAUNCHER,
        /** Rank 0 serves it itself (no launcher, e.g. under mpirun or srun). */
        RANK0
    }

    private static final Pattern TASKS_PER_NODE = Pattern.compile("(\\d+)(?:\\(x(\\d+)\\))?");
    private static final Pattern IPV4_LITERAL = Pattern.compile("^\\d{1,3}(\\.\\d{1,3}){3}$");

    /** Names of the variables one launcher family uses for placement. */
    private record Source(String what, String rank, String size, String localRank, String localSize) {
    }

    private static final Source KOLO = new Source("kolo run", KoloSettings.RANK.name(), KoloSettings.SIZE.name(),
            KoloSettings.LOCAL_RANK.name(), KoloSettings.LOCAL_SIZE.name());
    private static final Source OPEN_MPI = new Source("Open MPI",
            "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK",
            "OMPI_COMM_WORLD_LOCAL_SIZE");
    private static final Source MPICH = new Source("MPICH/Intel MPI",
            "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID", "MPI_LOCALNRANKS");
    private static final Source SLURM = new Source("Slurm",
            "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", "SLURM_NTASKS_PER_NODE");

    /** Validates and freezes the components. */
    public JobEnvironment {
        Objects.requireNonNull(rendezvousHost, "rendezvousHost");
        Objects.requireNonNull(rendezvousServer, "rendezvousServer");
        Objects.requireNonNull(secret, "secret");
        Objects.requireNonNull(bindAddress, "bindAddress");
        Objects.requireNonNull(startTimeout, "startTimeout");
        Objects.requireNonNull(timeout, "timeout");
        env = Map.copyOf(env);
    }

    /** Where this rank sits, as the variables say (see {@link JobPlacement} for a job started by mpirun or srun). */
    public Topology topology() {
        return new Topology(rank, size, localRank, localSize, crossRank, crossSize);
    }

    /** Parses the variables of this process ({@link System#getenv()}). */
    public static JobEnvironment fromSystem() {
        return from(System.getenv());
    }

    /**
     * Parses {@code env}.
     *
     * @throws BadSettingException naming the variable, its value and what is expected
     */
    public static JobEnvironment from(Map<String, String> env) {
        Objects.requireNonNull(env, "env");
        Source source = pickSource(env);

        int rank = 0;
        int size = 1;
        int localRank;
        int localSize;
        if (source == null) {
            // No KOLO_RANK: a single process. Placement variables given all the same must say so too.
            size = KoloSettings.SIZE.ifSet(env).orElse(1);
            if (size > 1) {
                throw new BadSettingException(KOLO.rank(), "KOLO_RANK is not set but KOLO_SIZE=" + size
                        + ": expected this process's rank, 0 to " + (size - 1) + " (KOLO_RANK and KOLO_SIZE go together;"
                        + " kolo run sets both)");
            }
            localSize = KoloSettings.LOCAL_SIZE.ifSet(env).orElse(1);
            localRank = KoloSettings.LOCAL_RANK.ifSet(env).orElse(0);
        } else {
            rank = requiredInt(env, source.rank(), 0, source);
            size = requiredInt(env, source.size(), 1, source);
            if (rank >= size) {
                throw bad(source.rank(), env.get(source.rank()),
                        "a rank below " + source.size() + "=" + size);
            }
            localSize = localSize(env, source, size);
            // Without placement information every rank is assumed to share one host.
            localRank = optionalInt(env, source.localRank(), 0).orElse(localSize == size ? rank : rank % localSize);
        }
        Source named = source != null ? source : KOLO;
        if (localSize > size) {
            throw bad(localSizeVar(env, named), String.valueOf(localSize), "at most the job size " + size);
        }
        if (localRank >= localSize) {
            throw bad(named.localRank(), String.valueOf(localRank), "a local rank below the local size " + localSize);
        }

        Topology derived = source == null ? null : derivedPlacement(env, source, rank, size, localRank, localSize);
        int crossSize = KoloSettings.CROSS_SIZE.ifSet(env).orElse(derived == null ? 1 : derived.crossSize());
        int crossRank = KoloSettings.CROSS_RANK.ifSet(env).orElse(derived == null ? 0 : derived.crossRank());
        // Every other host runs at least one rank, so this host's ranks and the other hosts cannot outnumber the job.
        if (crossSize > size - localSize + 1) {
            throw bad("KOLO_CROSS_SIZE", String.valueOf(crossSize), "at most " + (size - localSize + 1)
                    + " hosts for " + size + (size == 1 ? " rank" : " ranks") + " with " + localSize + " on this one ("
                    + localSizeVar(env, named) + ")");
        }
        if (crossRank >= crossSize) {
            throw bad("KOLO_CROSS_RANK", String.valueOf(crossRank),
                    "a cross rank below the cross size " + crossSize);
        }

        String addr = KoloSettings.RENDEZVOUS_ADDR.name();
        if (env.containsKey(addr) && env.get(addr).isBlank()) {
            // Blank is not "unset" here: a launcher that meant to name the store's host named nothing.
            throw bad(addr, env.get(addr), KoloSettings.RENDEZVOUS_ADDR.expected());
        }
        String host = KoloSettings.RENDEZVOUS_ADDR.from(env);
        int port = KoloSettings.RENDEZVOUS_PORT.ifSet(env).orElse(0);
        // Under mpirun/mpiexec/srun the ranks can meet without these (see Rendezvous).
        boolean launched = source != null && source != KOLO;
        if (port == 0 && size > 1 && !launched) {
            throw new BadSettingException("KOLO_RENDEZVOUS_PORT", "KOLO_RENDEZVOUS_PORT is not set but the job has " + size
                    + " ranks: expected the TCP port of the rendezvous server (kolo run sets it)");
        }
        RendezvousServer server = KoloSettings.RENDEZVOUS_SERVER.from(env).equals("launcher")
                ? RendezvousServer.LAUNCHER : RendezvousServer.RANK0;

        Optional<JobSecret> secret = KoloSettings.SECRET.ifSet(env).map(JobSecret::fromHex);
        if (secret.isEmpty() && env.containsKey(KoloSettings.SECRET.name())) {
            secret = Optional.of(JobSecret.fromHex(env.get(KoloSettings.SECRET.name())));   // blank: says so
        }
        if (secret.isEmpty() && size > 1 && !launched) {
            throw new BadSettingException("KOLO_SECRET", "KOLO_SECRET is not set but the job has " + size
                    + " ranks: expected the job's secret in hex (kolo run sets it; otherwise export the same"
                    + " value on every rank, e.g. KOLO_SECRET=$(openssl rand -hex 32))");
        }

        InetAddress bind = bindAddress(env.get(KoloSettings.IFACE.name()));
        int startTimeout = KoloSettings.START_TIMEOUT_SECONDS.from(env);
        int timeout = KoloSettings.TIMEOUT_SECONDS.from(env);

        return new JobEnvironment(rank, size, localRank, localSize, crossRank, crossSize, host, port, server,
                secret, bind, Duration.ofSeconds(startTimeout), Duration.ofSeconds(timeout), env);
    }

    private static Source pickSource(Map<String, String> env) {
        for (Source s : List.of(KOLO, OPEN_MPI, MPICH, SLURM)) {
            if (env.containsKey(s.rank())) {
                return s;
            }
        }
        return null;
    }

    /**
     * Horovod's cross rank and size ({@link Placement}) as far as this rank's variables tell of the others: the tasks
     * of every node under Slurm (given {@code SLURM_NODEID}, ranks placed node after node, Slurm's default block
     * distribution); otherwise every host is taken to run this host's number of ranks, host after host (the last
     * fewer), as mpirun's default does, and ranks placed otherwise (round-robin) get this host's index among that many
     * hosts. A guess until the ranks have met: then {@link JobPlacement} takes the exact place from every rank's host.
     */
    private static Topology derivedPlacement(Map<String, String> env, Source source, int rank, int size,
                                             int localRank, int localSize) {
        List<Integer> counts = slurmTasksPerNode(env, source, size);
        if (counts != null && env.containsKey("SLURM_NODEID")
                && counts.stream().mapToInt(Integer::intValue).sum() == size) {
            Topology t = Placement.packed(counts).get(rank);
            if (t.localRank() == localRank && t.localSize() == localSize) {
                return t;
            }
        }
        List<Integer> uniform = new ArrayList<>();
        for (int left = size; left > 0; left -= localSize) {
            uniform.add(Math.min(left, localSize));
        }
        Topology t = Placement.packed(uniform).get(rank);
        if (t.localRank() == localRank) {
            return t;
        }
        return new Topology(rank, size, localRank, localSize, rank / localSize, Math.ceilDiv(size, localSize));
    }

    private static int localSize(Map<String, String> env, Source source, int size) {
        List<Integer> counts = slurmTasksPerNode(env, source, size);
        if (counts != null) {
            int node = optionalInt(env, "SLURM_NODEID", 0).orElse(0);
            if (node >= counts.size()) {
                String perNode = slurmTasksPerNodeVar(env, source);
                throw bad("SLURM_NODEID", env.get("SLURM_NODEID"), "a node index below the " + counts.size()
                        + " nodes of " + perNode + "=" + env.get(perNode));
            }
            return counts.get(node);
        }
        return optionalInt(env, source.localSize(), 1).orElse(size);
    }

    /** Slurm's tasks of each node of the step, in node order (e.g. "4(x2),3"), or null when not given. */
    private static List<Integer> slurmTasksPerNode(Map<String, String> env, Source source, int size) {
        String perNode = slurmTasksPerNodeVar(env, source);
        if (perNode == null) {
            return null;
        }
        String raw = env.get(perNode);
        List<Integer> counts = new ArrayList<>();
        for (String part : raw.trim().split(",")) {
            Matcher m = TASKS_PER_NODE.matcher(part.trim());
            if (!m.matches()) {
                throw bad(perNode, raw, "a task count such as 4 or 4(x2),3");
            }
            int count = checkedInt(perNode, raw, m.group(1), 1);
            int times = m.group(2) == null ? 1 : checkedInt(perNode, raw, m.group(2), 1);
            for (int i = 0; i < times && counts.size() <= size; i++) {
                counts.add(count);
            }
        }
        return counts;
    }

    private static String localSizeVar(Map<String, String> env, Source source) {
        String perNode = slurmTasksPerNodeVar(env, source);
        return perNode != null ? perNode : source.localSize();
    }

    /** The step's own count (srun inside a larger allocation) before the allocation's. */
    private static String slurmTasksPerNodeVar(Map<String, String> env, Source source) {
        if (source != SLURM || env.containsKey(source.localSize())) {
            return null;
        }
        for (String v : List.of("SLURM_STEP_TASKS_PER_NODE", "SLURM_TASKS_PER_NODE")) {
            if (env.containsKey(v)) {
                return v;
            }
        }
        return null;
    }

    /** Resolves {@code KOLO_IFACE}: an IP literal, or an interface name mapped to its first IPv4 address. */
    static InetAddress bindAddress(String raw) {
        if (raw == null) {
            return InetAddress.ofLiteral("127.0.0.1");
        }
        String v = raw.trim();
        if (v.isEmpty()) {
            throw bad("KOLO_IFACE", raw, "a network interface name such as eth0 or an IP address");
        }
        // Literals only: never trigger a DNS lookup for a value meant to be an address.
        if (IPV4_LITERAL.matcher(v).matches() || v.indexOf(':') >= 0) {
            return ipLiteral("KOLO_IFACE", v);
        }
        NetworkInterface nif;
        try {
            nif = NetworkInterface.getByName(v);
        } catch (SocketException e) {
            throw new BadSettingException("KOLO_IFACE", "KOLO_IFACE=" + raw + ": cannot list network interfaces ("
                    + e.getMessage() + "); expected an interface name or an IP address");
        }
        if (nif == null) {
            throw bad("KOLO_IFACE", raw, "a network interface name of this host (" + interfaceNames()
                    + ") or an IP address");
        }
        return nif.inetAddresses().filter(a -> a instanceof Inet4Address).findFirst()
                .orElseThrow(() -> bad("KOLO_IFACE", raw,
                        "an interface with an IPv4 address (give the IP address itself to use IPv6)"));
    }

    private static InetAddress ipLiteral(String var, String v) {
        try {
            return InetAddress.ofLiteral(v);
        } catch (IllegalArgumentException e) {
            throw bad(var, v, "a valid IP address or a network interface name such as eth0");
        }
    }

    private static String interfaceNames() {
        try {
            List<String> names = new ArrayList<>();
            NetworkInterface.networkInterfaces().forEach(n -> names.add(n.getName()));
            return names.isEmpty() ? "none found" : String.join(", ", names);
        } catch (SocketException e) {
            return "cannot list: " + e.getMessage();
        }
    }

    private static int requiredInt(Map<String, String> env, String var, int min, Source source) {
        String raw = env.get(var);
        if (raw == null) {
            throw new BadSettingException(var, var + " is not set: expected "
                    + (min == 0 ? "a non-negative integer" : "a positive integer") + " (the " + source.what()
                    + " variables " + source.rank() + " and " + source.size() + " go together)");
        }
        return checkedInt(var, raw, raw, min);
    }

    private static Optional<Integer> optionalInt(Map<String, String> env, String var, int min) {
        String raw = env.get(var);
        return raw == null ? Optional.empty() : Optional.of(checkedInt(var, raw, raw, min));
    }

    private static int checkedInt(String var, String raw, String digits, int min) {
        String expected = KoloSettings.integerExpected(min, Integer.MAX_VALUE);
        int v;
        try {
            v = Integer.parseInt(digits.trim());
        } catch (NumberFormatException e) {
            throw bad(var, raw, expected);
        }
        if (v < min) {
            throw bad(var, raw, expected);
        }
        return v;
    }

    private static BadSettingException bad(String var, String value, String expected) {
        return new BadSettingException(var, var + "=" + (value == null ? "" : "'" + value + "'")
                + " is invalid: expected " + expected);
    }
}
