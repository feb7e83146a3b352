package io.kolo;

import io.kolo.bootstrap.AdvertisedAddress;
import io.kolo.bootstrap.CpuBinding;
import io.kolo.bootstrap.InMemoryStore;
import io.kolo.bootstrap.JobEnvironment;
import io.kolo.bootstrap.JobPlacement;
import io.kolo.bootstrap.KeyValueStore;
import io.kolo.bootstrap.Placement;
import io.kolo.bootstrap.Rendezvous;
import io.kolo.collective.CollectiveOps;
import io.kolo.collective.FlatCollectives;
import io.kolo.collective.Hierarchy;
import io.kolo.collective.Hosts;
import io.kolo.engine.Engine;
import io.kolo.engine.EngineSettings;
import io.kolo.transport.LocalTransport;
import io.kolo.transport.Transport;
import io.kolo.transport.Transports;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * How a {@link Communicator} comes to be: the settings checked, the rendezvous joined, the transports connected, the
 * algorithms chosen for the topology, and the engine started on top; or, for tests and several ranks per JVM, ranks
 * as threads over an in-memory transport.
 */
final class Jobs {
    private Jobs() {
    }

    /** Joins the job described by {@code env} (see {@link Communicator#fromEnvironment(Map)}). */
    static Communicator fromEnvironment(Map<String, String> env) {
        long started = System.nanoTime();
        // Every setting at once, whether or not this job would read it: a typo shows on the first run, not the
        // first run on several hosts.
        java.util.List<String> problems = io.kolo.bootstrap.KoloSettings.problems(env);
        if (!problems.isEmpty()) {
            String first = problems.getFirst();
            throw new BadSettingException(first.substring(0, first.indexOf('=')), String.join("; ", problems));
        }
        KoloLogging.apply(io.kolo.bootstrap.KoloSettings.LOG_LEVEL.from(env));
        JobEnvironment job = JobEnvironment.from(env);
        EngineSettings settings = EngineSettings.fromEnvironment(env);
        Topology topology = job.topology();
        java.util.List<Integer> cpus = CpuBinding.apply(env, job.localRank(), job.localSize());
        if (io.kolo.bootstrap.KoloSettings.REPORT_BINDINGS.from(env).equals("on")) {
            // What mpirun --report-bindings prints, one line per rank, on the rank's stderr.
            System.err.println("kolo: rank " + job.rank() + " (local rank " + job.localRank() + " of "
                    + job.localSize() + " on " + hostName(env) + ") "
                    + (cpus.isEmpty() ? "is not bound (" + io.kolo.bootstrap.KoloSettings.BIND_TO.name() + "="
                    + io.kolo.bootstrap.KoloSettings.BIND_TO.from(env) + ")" : "is bound to CPU"
                    + (cpus.size() > 1 ? "s " : " ") + CpuBinding.format(cpus)));
        }
        if (job.size() == 1) {
            InMemoryStore store = new InMemoryStore();
            Transport t = LocalTransport.group(1, settings.timeout()).getFirst();
            KeyValueStore launcherStore = viewStoreOfOneRank(job);
            Communicator c = launcherStore == null ? assemble(topology, null, t, store, settings, store)
                    : assemble(topology, null, t, store, settings, store, launcherStore);
            if (launcherStore != null) {
                c.publishView(launcherStore, hostName(env), io.kolo.bootstrap.ElasticGeneration.of(env).orElse(0),
                        java.time.Duration.ofMillis(io.kolo.bootstrap.KoloSettings.VIEW_INTERVAL_MS.from(env)));
            }
            JoinLog.joined(env, topology, t, settings, started);
            return c;
        }
        Rendezvous rendezvous = Rendezvous.join(job);
        Transport transport;
        try {
            transport = Transports.connect(job, AdvertisedAddress.choose(job, rendezvous.address().getAddress()),
                    rendezvous.dataPlaneStore(), rendezvous.secret());
        } catch (RuntimeException e) {
            rendezvous.close();
            throw e;
        }
        rendezvous.joined();
        boolean storeInRankZero = job.rendezvousServer() == JobEnvironment.RendezvousServer.RANK0;
        StallWatch watch = new StallWatch(job.rank(), job.size(), transport, rendezvous.dataPlaneStore(),
                storeInRankZero, job.timeout());
        AutoCloseable storeAndLastWords = LastWords.listen(job.rank(), rendezvous.store(), rendezvous,
                !rendezvous.servesStore());
        // The watch first: it writes to the store, which closes with the last words.
        Communicator c = assemble(topology, placedOn(env), transport, null, job, rendezvous.store(), storeInRankZero,
                watch, settings, watch, storeAndLastWords);
        if (io.kolo.view.RankReporter.wanted(env)) {
            // The store's part for this job (an elastic generation's own), as the rendezvous joined it.
            c.publishView(rendezvous.store(), hostName(env), io.kolo.bootstrap.ElasticGeneration.of(env).orElse(0),
                    java.time.Duration.ofMillis(io.kolo.bootstrap.KoloSettings.VIEW_INTERVAL_MS.from(env)));
        }
        if (rendezvous.servesStore() || job.rank() == 0) {
            // No launcher holds the job's view (mpirun, srun, Spark): rank 0 does, when asked (kolo run never gives
            // its ranks the view's settings).
            try {
                io.kolo.view.ViewHolder.open(env, job.size(), rendezvous.store()).ifPresent(c::holdView);
            } catch (RuntimeException e) {
                c.close();
                throw e;
            }
        }
        JoinLog.joined(env, c.topology(), transport, settings, started);
        return c;
    }

    /**
     * Where a job of one rank publishes its figures for the job view: the launcher's store, when a launcher that holds
     * the view ({@code kolo run --dashboard/--report}, {@code KOLO_VIEW=1}) names it; else null. The rank needs no
     * rendezvous, but without this its view would show no figures.
     */
    private static KeyValueStore viewStoreOfOneRank(JobEnvironment job) {
        if (!io.kolo.view.RankReporter.wanted(job.env()) || job.rendezvousServer() != JobEnvironment.RendezvousServer.LAUNCHER
                || job.rendezvousPort() == 0 || job.secret().isEmpty() || job.rendezvousHost() == null) {
            return null;
        }
        java.net.InetSocketAddress at;
        try {
            at = new java.net.InetSocketAddress(java.net.InetAddress.getByName(job.rendezvousHost()),
                    job.rendezvousPort());
        } catch (java.net.UnknownHostException e) {
            throw new BadSettingException("KOLO_RENDEZVOUS_ADDR", "KOLO_RENDEZVOUS_ADDR=" + job.rendezvousHost()
                    + " does not resolve on this host: name the launcher's host as every host knows it, or its IP"
                    + " address");
        }
        KeyValueStore client = io.kolo.bootstrap.RendezvousClient.connect(at, job.secret().get(), job.startTimeout());
        return io.kolo.bootstrap.ElasticGeneration.of(job.env())
                .map(g -> io.kolo.bootstrap.ElasticGeneration.scope(client, g)).orElse(client);
    }

    /**
     * The name of the host this rank was placed on, as its topology was computed from (see {@link Placement}): the
     * launcher's ({@code KOLO_HOSTNAME}), else the machine's own, as under {@code mpirun} ({@link JobPlacement}).
     */
    private static String placedOn(Map<String, String> env) {
        String assigned = io.kolo.bootstrap.KoloSettings.HOSTNAME.from(env);
        return assigned != null ? assigned : io.kolo.bootstrap.HostName.local().orElse(null);
    }

    private static String hostName(Map<String, String> env) {
        String placed = placedOn(env);
        return placed != null ? placed : "this host";
    }

    static List<Communicator> localHosts(int hosts, int perHost, EngineSettings engineSettings) {
        int size = hosts * perHost;
        InMemoryStore store = new InMemoryStore();
        List<Transport> transports = LocalTransport.group(size, engineSettings.timeout());
        List<Topology> everyRank = new ArrayList<>(size);
        for (int r = 0; r < size; r++) {
            everyRank.add(new Topology(r, size, r % perHost, perHost, r / perHost, hosts));
        }
        List<Communicator> comms = new ArrayList<>(size);
        for (int r = 0; r < size; r++) {
            comms.add(assemble(everyRank.get(r), null, transports.get(r), Hosts.of(everyRank), null, store, false,
                    null, engineSettings));
        }
        return List.copyOf(comms);
    }

    /** Every rank's topology and host are exchanged over {@code transport} first: all ranks must call this together. */
    private static Communicator assemble(Topology topology, String hostName, Transport transport, KeyValueStore store,
                                         EngineSettings settings, AutoCloseable... owned) {
        return assemble(topology, hostName, transport, null, null, store, false, null, settings, owned);
    }

    /**
     * @param hostName        the host this rank was placed on, or null when it knows none
     * @param hosts           every rank's host, or null to exchange them over the transport: the one place every
     *                        rank learns where every rank runs, for the collectives, for {@link JobPlacement} and
     *                        for the messages of {@link FailureDiagnosis} (which must not need the store)
     * @param job             the job whose cross rank the variables may only guess ({@link JobPlacement}), or null
     *                        when {@code topology} is exact
     * @param storeInRankZero rank 0 serves {@code store}: it goes when rank 0 goes ({@link FailureDiagnosis})
     * @param watch           which ranks wait on which (null: not watched), for the same messages
     */
    private static Communicator assemble(Topology topology, String hostName, Transport transport, Hosts hosts,
                                         JobEnvironment job, KeyValueStore store, boolean storeInRankZero,
                                         StallWatch watch, EngineSettings settings, AutoCloseable... owned) {
        FlatCollectives flat = new FlatCollectives(transport, settings.smallMessageBytes());
        CollectiveOps ops;
        Hosts all;
        try {
            all = hosts != null ? hosts : topology.size() == 1 ? Hosts.of(List.of(topology))
                    : Hierarchy.agree(flat, topology, hostName, settings.algorithms());
            ops = Hierarchy.select(flat, transport, all, settings.algorithms(), settings.autotune() != null);
        } catch (RuntimeException e) {
            flat.close();
            transport.close();
            for (AutoCloseable c : owned) {
                try {
                    c.close();
                } catch (Exception suppressed) {
                    e.addSuppressed(suppressed);
                }
            }
            throw e;
        }
        // The topology was exchanged as the variables guessed it; the hosts group the ranks by name, not by it.
        Topology placed = job == null ? topology : JobPlacement.of(job, all.placingNames().orElse(null));
        FailureDiagnosis diagnosis = new FailureDiagnosis(topology.rank(), store, transport, storeInRankZero, all,
                watch);
        Engine engine = new Engine(ops, settings, diagnosis);
        AutoCloseable[] closing = new AutoCloseable[owned.length + 1];
        closing[0] = ops;
        System.arraycopy(owned, 0, closing, 1, owned.length);
        return new Communicator(placed, all, engine, transport, diagnosis, closing);
    }

}
