package io.kolo.bootstrap;

import io.kolo.BadSettingException;
import io.kolo.KoloException;
import io.kolo.launch.JobSecret;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.net.UnknownHostException;
import java.util.Collections;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * How one rank of a job of several joins the rendezvous store, and the secret the job's connections prove.
 * Picked from the environment:
 * <ol>
 *   <li>{@code KOLO_RENDEZVOUS_PORT} is set ({@code kolo run}, or by hand): the store is at
 *       {@code KOLO_RENDEZVOUS_ADDR:KOLO_RENDEZVOUS_PORT}, the secret is {@code KOLO_SECRET};</li>
 *   <li>started by mpirun/mpiexec/srun with every rank on this host: rank 0 serves the store on loopback and
 *       passes port and a fresh secret to the others through a {@link RendezvousFile} — no variable at all;</li>
 *   <li>started by mpirun/mpiexec/srun with {@code KOLO_RENDEZVOUS_ADDR} naming rank 0's host: rank 0 serves
 *       the store there on {@code KOLO_RENDEZVOUS_PORT} (default {@value #DEFAULT_PORT}); the secret is
 *       {@code KOLO_SECRET} or comes from the user's {@link UserSecret} file;</li>
 *   <li>started by mpirun (or srun with PMIx) on several hosts without {@code KOLO_RENDEZVOUS_ADDR}: rank 0
 *       passes its address and a fresh secret to the others through the launcher's PMIx server
 *       ({@link Pmix});</li>
 *   <li>on several hosts with neither: an error that says what to set.</li>
 * </ol>
 */
public final class Rendezvous implements AutoCloseable {
    private static final System.Logger LOG = LazyLogger.of(Rendezvous.class);

    /** Port rank 0 serves on when only {@code KOLO_RENDEZVOUS_ADDR} is given under mpirun or srun. */
    public static final int DEFAULT_PORT = 29500;
    /** mpirun's own address in Open MPI's {@code OMPI_MCA_orte_hnp_uri} ("1.0;tcp://10.0.0.1:4500;..."). */
    private static final Pattern HNP_TCP = Pattern.compile("tcp://(\\d{1,3}(?:\\.\\d{1,3}){3}):");

    private final KeyValueStore store;
    private final KeyValueStore dataPlane;
    private final JobSecret secret;
    private final InetSocketAddress address;
    private final RendezvousFile published;

    private Rendezvous(KeyValueStore store, JobSecret secret, InetSocketAddress address, RendezvousFile published) {
        this(store, store, secret, address, published);
    }

    private Rendezvous(KeyValueStore store, KeyValueStore dataPlane, JobSecret secret, InetSocketAddress address,
                       RendezvousFile published) {
        this.store = store;
        this.dataPlane = dataPlane;
        this.secret = secret;
        this.address = address;
        this.published = published;
    }

    /**
     * Joins (rank 0 serving the store where that is its job) and waits at most the start timeout.
     *
     * @throws BadSettingException naming the variable to set when the environment is not enough
     * @throws io.kolo.KoloTimeoutException when rank 0 or the store does not show up in time
     */
    public static Rendezvous join(JobEnvironment job) {
        if (job.size() < 2) {
            throw new IllegalArgumentException("a job of one rank needs no rendezvous");
        }
        Optional<Launch> launch = Launch.detect(job.env());
        if (launch.isEmpty()) {
            // JobEnvironment has checked that KOLO_RENDEZVOUS_PORT and KOLO_SECRET are there.
            return explicit(job, job.secret().orElseThrow(), job.rendezvousPort());
        }
        boolean named = job.env().containsKey(KoloSettings.RENDEZVOUS_ADDR.name());
        if (!named && job.localSize() < job.size()) {
            if (Pmix.offered(job.env())) {
                return viaPmix(job);
            }
            throw spansHosts(job, launch.get());
        }
        if (named || job.rendezvousPort() != 0) {
            int port = job.rendezvousPort() != 0 ? job.rendezvousPort() : DEFAULT_PORT;
            return explicit(job, sharedSecret(job, launch.get()), port);
        }
        return oneHost(job, launch.get());
    }

    /** The store; closing this object closes it. */
    public KeyValueStore store() {
        return store;
    }

    /**
     * The store's part for the data plane's keys (addresses, shared-memory segments): the store itself, except when
     * this process joins a launcher's store again after {@code Kolo.shutdown()}, where it is this join's own part.
     */
    public KeyValueStore dataPlaneStore() {
        return dataPlane;
    }

    /** True when this process serves the store (rank 0 with no launcher), which then ends with the job. */
    public boolean servesStore() {
        return store instanceof RendezvousServer;
    }

    /** The secret every data connection of this job proves. */
    public JobSecret secret() {
        return secret;
    }

    /** Where the store is served (the data plane picks its interface by the route there). */
    public InetSocketAddress address() {
        return address;
    }

    /**
     * Every rank has joined (rank 0's data plane is connected to all): the rendezvous file, which holds the
     * secret, is no longer needed, so it goes now rather than at close, which a crash could skip.
     */
    public void joined() {
        if (published != null) {
            published.delete();
        }
    }

    @Override
    public void close() {
        if (published != null) {
            published.delete();
        }
        store.close();
    }

    private static Rendezvous explicit(JobEnvironment job, JobSecret secret, int port) {
        InetSocketAddress at;
        try {
            at = new InetSocketAddress(InetAddress.getByName(job.rendezvousHost()), port);
        } catch (UnknownHostException e) {
            throw new BadSettingException("KOLO_RENDEZVOUS_ADDR", "KOLO_RENDEZVOUS_ADDR=" + job.rendezvousHost()
                    + " does not resolve on this host: name rank 0's host as every host knows it, or its IP address");
        }
        boolean rank0Serves = job.rendezvousServer() == JobEnvironment.RendezvousServer.RANK0;
        Optional<Integer> generation = ElasticGeneration.of(job.env());
        // Kolo.init() again after Kolo.shutdown(): the launcher's store outlives the last job, with its data-plane keys
        // in it, and rank 0 serves a new store where the last one may still be closing. The ranks, rejoining in step,
        // meet under keys of their own (the failure keys stay where the launcher reads them) and prove a secret of
        // their own, which rank 0's last store refuses.
        int join = generation.isPresent() ? 0 : Rejoins.count(at, secret, job.rank());
        JobSecret joinSecret = join > 0 ? Rejoins.secret(secret, join) : secret;
        if (job.rank() != 0 || !rank0Serves) {
            KeyValueStore client = join > 0 && rank0Serves
                    ? RendezvousClient.connectRetryingRefusals(at, joinSecret, job.startTimeout())
                    : RendezvousClient.connect(at, secret, job.startTimeout());
            if (generation.isPresent()) {
                // One of an elastic launcher's successive jobs: its own keys, its own data-plane secret.
                return new Rendezvous(ElasticGeneration.scope(client, generation.get()),
                        ElasticGeneration.secret(secret, generation.get()), at, null);
            }
            if (join > 0 && !rank0Serves) {
                return new Rendezvous(client, Rejoins.scope(client, join), joinSecret, at, null);
            }
            return new Rendezvous(client, joinSecret, at, null);
        }
        if (at.getAddress().isLoopbackAddress() && job.crossSize() > 1) {
            // A warning, not an error: hosts simulated on one machine (tests, network namespaces sharing
            // loopback) legitimately meet there; on real hosts the others time out and this line says why.
            LOG.log(System.Logger.Level.WARNING, "KOLO_RENDEZVOUS_ADDR=" + job.rendezvousHost() + " is "
                    + at.getAddress().getHostAddress() + " on rank 0's host, which ranks on other hosts cannot reach:"
                    + " give rank 0's host name as the other hosts know it, or its IP address");
        }
        try {
            return new Rendezvous(RendezvousServer.start(at.getAddress(), port, joinSecret), joinSecret, at, null);
        } catch (KoloException e) {
            throw new KoloException(e.getMessage() + " (rank 0 runs on " + hostName() + "; KOLO_RENDEZVOUS_ADDR must"
                    + " name rank 0's host, and KOLO_RENDEZVOUS_PORT a free port there)", e);
        }
    }

    private static Rendezvous oneHost(JobEnvironment job, Launch launch) {
        String jobId = launch.jobId().orElseThrow(() -> new BadSettingException("KOLO_RENDEZVOUS_PORT",
                launch.launcher() + " gave this process no job id to find rank 0 by: set KOLO_RENDEZVOUS_PORT to a free port and"
                + " KOLO_SECRET (e.g. $(openssl rand -hex 32)) on every rank"));
        RendezvousFile file = RendezvousFile.forJob(job.env(), launch.launcher() + ":" + jobId);
        InetAddress loopback = InetAddress.getLoopbackAddress();
        if (job.rank() == 0) {
            JobSecret secret = JobSecret.generate();
            RendezvousServer server = RendezvousServer.start(loopback, 0, secret);
            try {
                file.publish(server.address().getPort(), secret);
            } catch (RuntimeException e) {
                server.close();
                throw e;
            }
            return new Rendezvous(server, secret, server.address(), file);
        }
        RendezvousFile.Entry e = file.await(job.startTimeout(), "rank " + job.rank() + ": rank 0 of this "
                + launch.launcher() + " job (" + jobId + ") did not publish its rendezvous address in " + file.path()
                + " within " + job.startTimeout().toSeconds() + " s (KOLO_START_TIMEOUT_SECONDS); if the ranks run"
                + " on several hosts, set KOLO_RENDEZVOUS_ADDR to rank 0's host: "
                + launch.howToSet("KOLO_RENDEZVOUS_ADDR", "node0"));
        InetSocketAddress at = new InetSocketAddress(loopback, e.port());
        return new Rendezvous(RendezvousClient.connect(at, e.secret(), job.startTimeout()), e.secret(), at, null);
    }

    /** Ranks on several hosts with a PMIx server: rank 0 passes its address and a fresh secret through it. */
    private static Rendezvous viaPmix(JobEnvironment job) {
        if (job.rank() == 0) {
            JobSecret secret = JobSecret.generate();
            RendezvousServer server = RendezvousServer.start(rank0Address(job), job.rendezvousPort(), secret);
            try {
                Pmix.shareFromRank0(0, server.address().getAddress().getHostAddress() + " "
                        + server.address().getPort() + " " + secret.toHex(), job.startTimeout());
            } catch (RuntimeException e) {
                server.close();
                throw e;
            }
            return new Rendezvous(server, secret, server.address(), null);
        }
        String[] shared = Pmix.shareFromRank0(job.rank(), null, job.startTimeout()).split(" ");
        if (shared.length != 3) {
            throw new KoloException("rank 0's rendezvous address from PMIx is malformed (" + shared.length + " fields)");
        }
        InetSocketAddress at = new InetSocketAddress(InetAddress.ofLiteral(shared[0]), Integer.parseInt(shared[1]));
        JobSecret secret = JobSecret.fromHex(shared[2]);
        return new Rendezvous(RendezvousClient.connect(at, secret, job.startTimeout()), secret, at, null);
    }

    /**
     * Where rank 0 serves the store for ranks on other hosts: KOLO_IFACE if given; else the address it
     * reaches mpirun by (the network Open MPI's own daemons use); else its first non-loopback IPv4 address.
     */
    private static InetAddress rank0Address(JobEnvironment job) {
        if (job.env().containsKey(KoloSettings.IFACE.name())) {
            return job.bindAddress();
        }
        Matcher m = HNP_TCP.matcher(job.env().getOrDefault("OMPI_MCA_orte_hnp_uri", ""));
        if (m.find()) {
            InetAddress local = AdvertisedAddress.routeTo(InetAddress.ofLiteral(m.group(1)));
            if (local != null && !local.isLoopbackAddress()) {
                return local;
            }
        }
        try {
            for (NetworkInterface nif : Collections.list(NetworkInterface.getNetworkInterfaces())) {
                if (nif.isUp() && !nif.isLoopback()) {
                    for (InetAddress a : Collections.list(nif.getInetAddresses())) {
                        if (a instanceof java.net.Inet4Address) {
                            return a;
                        }
                    }
                }
            }
        } catch (SocketException e) {
            // Reported below.
        }
        throw new BadSettingException("KOLO_IFACE", "rank 0 found no network address for ranks on other hosts to reach it:"
                + " set KOLO_IFACE to the interface (or address) they reach it by");
    }

    private static JobSecret sharedSecret(JobEnvironment job, Launch launch) {
        if (job.secret().isPresent()) {
            return job.secret().get();
        }
        JobSecret user = UserSecret.load(job.env()).orElseThrow(() -> new BadSettingException("KOLO_SECRET",
                "ranks on several hosts need a shared secret and neither KOLO_SECRET nor " + UserSecret.path(job.env())
                        + " exists: create that file once on a home directory every host shares ("
                        + UserSecret.HOW_TO_CREATE + ") or export KOLO_SECRET=$(openssl rand -hex 32) and pass it on ("
                        + launch.howToSet("KOLO_SECRET", "...").replace("=...", "") + ")"));
        String jobId = launch.jobId().orElseThrow(() -> new BadSettingException("KOLO_SECRET", launch.launcher()
                + " gave this process no job id to derive the job's secret from " + UserSecret.path(job.env())
                + ": set KOLO_SECRET on every rank"));
        return user.derive(launch.launcher() + ":" + jobId);
    }

    private static BadSettingException spansHosts(JobEnvironment job, Launch launch) {
        return new BadSettingException("KOLO_RENDEZVOUS_ADDR", "this " + launch.launcher() + " job spans hosts (" + job.localSize()
                + " of its " + job.size() + " ranks on this one), so its ranks cannot meet on one host: set"
                + " KOLO_RENDEZVOUS_ADDR to rank 0's host on every rank, e.g. "
                + launch.howToSet("KOLO_RENDEZVOUS_ADDR", "node0") + " (rank 0 serves port " + DEFAULT_PORT
                + " there, or KOLO_RENDEZVOUS_PORT), with a secret in " + UserSecret.path(job.env())
                + " on a shared home or KOLO_SECRET");
    }

    private static String hostName() {
        return HostName.local().orElse("this host");
    }
}
