package io.kolo.launcher.elastic;

import io.kolo.launcher.job.FailureRecord;
import io.kolo.launcher.job.Hosts;
import io.kolo.launcher.job.JobStart;
import io.kolo.launcher.job.KoloClassPath;
import io.kolo.launcher.job.RankEnvironment;
import io.kolo.launcher.job.RankMap;
import io.kolo.launcher.job.RestartPolicy;
import io.kolo.launcher.job.Supervisor;
import io.kolo.launcher.job.UsageException;
import io.kolo.launcher.job.WorkerGroup;
import io.kolo.launcher.start.AgentOffice;
import io.kolo.launcher.start.AgentStart;
import io.kolo.launcher.start.LocalStart;
import io.kolo.launcher.start.RankLaunch;
import io.kolo.launcher.start.SshStart;
import io.kolo.launcher.start.WorkerStart;

import io.kolo.bootstrap.AdvertisedAddress;
import io.kolo.bootstrap.ElasticGeneration;
import io.kolo.bootstrap.KeyValueStore;
import io.kolo.bootstrap.RendezvousServer;
import io.kolo.launch.JobSecret;
import io.kolo.transport.ShmSegments;
import io.kolo.transport.Transports;

import java.io.IOException;
import java.io.PrintStream;
import java.net.InetAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * An elastic job's {@link RestartPolicy} ({@code kolo run --min-np}), run by the {@link Supervisor}: starts the workers,
 * and whenever one fails or the hosts change, publishes the next generation (each worker's new rank, in the store it
 * serves for the job's whole life) for the survivors to re-join and starts workers for the new slots. One line per
 * reset says why, the new size and the count.
 * Ends with 0 when the workers finish, or with the failure's code once the reset limit, the elastic timeout or the
 * blacklist leaves no way on.
 */
public final class ElasticDriver implements RestartPolicy {
    private static final Duration POLL = Duration.ofSeconds(1);
    // How long a removed worker has to leave by itself at its next commit before it is stopped.
    private static final Duration REMOVED_GRACE = Duration.ofSeconds(10);
    // How long after a failure other workers' exits still count as the same event (a host lost, a shared bug).
    private static final Duration SETTLE = Duration.ofSeconds(1);

    private final ElasticPlan plan;
    private final PrintStream err;
    private Supervisor supervisor;
    private WorkerGroup workers;
    private final HostBlacklist blacklist;
    private final DiscoveryWarnings discoveryWarnings = new DiscoveryWarnings(this::message);
    private final JobSecret secret = JobSecret.generate();
    private RendezvousServer server;
    private AgentOffice office;
    private ElasticWorkerEnvironment workerEnvironment;
    private List<Hosts.Host> hosts = List.of();
    /** The workers of the current generation and their ranks. */
    private Map<String, Integer> ranks = new LinkedHashMap<>();
    private final Map<String, String> hostOf = new LinkedHashMap<>();
    private int generation = -1;
    private int resets;
    private int nextWorker;
    private boolean finishing;
    private int finishCode;
    private long nextPoll;

    ElasticDriver(ElasticPlan plan, PrintStream err) {
        this.plan = plan;
        this.err = err;
        this.blacklist = new HostBlacklist(plan.hostFailures(), plan.cooldownMin(), plan.cooldownMax());
    }

    /** Finds the hosts, serves the job's store and starts the first generation's workers. */
    @Override
    public Integer start(Supervisor s) throws InterruptedException {
        supervisor = s;
        workers = s.group();
        try {
            hosts = plan.discovery().find();
        } catch (HostDiscovery.Failed e) {
            message("kolo: " + e.getMessage() + "; no worker was started");
            return UsageException.EXIT_CODE;
        }
        boolean loopbackOnly = !plan.discovery().changes() && hosts.stream().allMatch(h -> plan.isLocal().test(h.name()));
        InetAddress bind = loopbackOnly ? InetAddress.getLoopbackAddress() : plan.networkInterface() != null
                ? AdvertisedAddress.ofInterface(plan.networkInterface()) : InetAddress.ofLiteral("0.0.0.0");
        try {
            server = RendezvousServer.start(bind, 0, secret);
            workerEnvironment = new ElasticWorkerEnvironment(plan, secret, server.address(), loopbackOnly);
            if (plan.agent() != null && !loopbackOnly) {
                office = AgentOffice.open(bind, Duration.ofSeconds(plan.startTimeoutSeconds()), supervisor::abort);
            }
        } catch (IOException e) {
            message("kolo: cannot listen for the workers' agents on " + bind.getHostAddress() + ": " + e.getMessage());
            return 1;
        } catch (RuntimeException e) {
            message("kolo: " + e.getMessage());
            return 1;
        }
        ShmSegments.removeStale();
        nextPoll = System.nanoTime() + POLL.toNanos();
        return nextGeneration("start", plan.np());
    }

    /** The workers are gone: closes the store, and removes what a worker killed during setup left. */
    @Override
    public void close() {
        if (office != null) {
            office.close();
        }
        if (server != null) {
            server.close();
        }
        for (int g = 0; g <= generation; g++) {
            ShmSegments.removeJob(Transports.jobTag(ElasticGeneration.secret(secret, g)));
        }
    }

    @Override
    public Integer handle(WorkerGroup.Event event) throws InterruptedException {
        return event instanceof WorkerGroup.Exited exit ? exited(exit) : null;
    }

    /** Polls the discovery script every second, unless the job is finishing. */
    @Override
    public Integer idle() throws InterruptedException {
        if (System.nanoTime() - nextPoll < 0) {
            return null;
        }
        nextPoll = System.nanoTime() + POLL.toNanos();
        return plan.discovery().changes() && !finishing ? pollHosts() : null;
    }

    /** A worker exited: the job's exit code when that ends the job, else null. */
    private Integer exited(WorkerGroup.Exited exit) throws InterruptedException {
        if (supervisor.stopped()) {
            return supervisor.stoppedCode();
        }
        if (!ranks.containsKey(exit.worker())) {
            return null;                      // removed from the job earlier: expected to go
        }
        List<WorkerGroup.Exited> exits = new ArrayList<>(List.of(exit));
        if (exit.code() != 0 && !finishing) {
            // A lost host or a bug every rank hits ends several workers together: one decision for all of them.
            settle(exits);
            if (supervisor.stopped()) {
                return supervisor.stoppedCode();
            }
        }
        if (finishing || exits.stream().anyMatch(e -> e.code() == 0)) {
            Integer code = null;
            for (WorkerGroup.Exited e : exits.stream().sorted(Comparator.comparingInt(e -> e.code() == 0 ? 0 : 1))
                    .toList()) {
                code = finished(e);
            }
            return code;
        }
        int size = ranks.size();
        KeyValueStore store = ElasticGeneration.scope(server, generation);
        List<String> causes = new ArrayList<>();
        List<String> hostsFailed = new ArrayList<>();
        List<WorkerGroup.Exited> byRank = exits.stream()
                .sorted(Comparator.comparingInt(e -> ranks.get(e.worker()))).toList();
        int code = byRank.getFirst().code();
        for (WorkerGroup.Exited e : byRank) {
            String host = hostOf.get(e.worker());
            // Named by its rank in this generation, which may not be the one it started with.
            RankLaunch now = new RankLaunch(ranks.remove(e.worker()), plan.command(), Map.of(),
                    plan.workingDirectory(), e.launch().start());
            String cause = FailureRecord.inStore(store, err).record(now, e.code()).cause();
            supervisor.view().exited(now.rank(), e.code(), cause);
            causes.add(cause);
            hostsFailed.add(host);
        }
        if (size > 1 && ranks.isEmpty()) {
            // Horovod's rule: when every rank failed, resets would only repeat what failed them all. A lone rank's
            // failure says nothing of the kind (on fixed hosts that is the crashed rank to start again).
            message("kolo: all " + size + " ranks of job " + generation + " failed: " + String.join("; ", causes)
                    + "; stopping the job");
            KoloClassPath.hintFor(plan.command(), null).ifPresent(this::message);
            return code;
        }
        // One failure per host and event: a host whose workers die together failed once (it is said once too).
        List<String> why = new ArrayList<>();
        for (int i = 0; i < causes.size(); i++) {
            String host = hostsFailed.get(i);
            String excluded = hostsFailed.lastIndexOf(host) == i ? blacklist.failed(host, System.nanoTime()) : null;
            why.add(causes.get(i) + (excluded != null ? "; " + excluded : ""));
        }
        if (plan.resetLimit() != null && resets >= plan.resetLimit()) {
            message("kolo: " + String.join("; ", why) + "; reset limit " + plan.resetLimit()
                    + " reached (--reset-limit), stopping the job");
            KoloClassPath.hintFor(plan.command(), null).ifPresent(this::message);
            return code;
        }
        Integer failed = nextGeneration(String.join("; ", why), plan.maxNp());
        return failed == null ? null : failed != 0 ? failed : code;
    }

    /** Adds to {@code exits} the workers of this job that exit soon after, until none has for a moment. */
    private void settle(List<WorkerGroup.Exited> exits) throws InterruptedException {
        WorkerGroup.Event more;
        while ((more = workers.next(SETTLE)) != null) {
            if (more instanceof WorkerGroup.Exited x && ranks.containsKey(x.worker())) {
                exits.add(x);
            }
        }
    }

    /** A worker exited while the job finishes (one worker done means training is done): no more resets. */
    private Integer finished(WorkerGroup.Exited exit) {
        Integer rank = ranks.remove(exit.worker());
        if (rank == null) {
            return null;
        }
        supervisor.view().exited(rank, exit.code(), exit.code() == 0 ? null : "rank " + rank + " on host "
                + hostOf.get(exit.worker()) + " exited with code " + exit.code() + " while the job was finishing");
        if (!finishing) {
            // Workers that lost their job to this exit wait for a next one: tell them there will be none.
            server.put(ElasticGeneration.FINISHED, "rank " + rank + " on host " + hostOf.get(exit.worker())
                    + " finished (exit code " + exit.code() + ") while others were training");
        }
        finishing = true;
        if (exit.code() != 0 && finishCode == 0) {
            finishCode = exit.code();
            message("kolo: rank " + rank + " on host " + hostOf.get(exit.worker()) + " exited with code "
                    + exit.code() + " while the job was finishing");
        }
        return ranks.isEmpty() ? finishCode : null;
    }

    /** Polls the discovery script; resets when the workers' places would change. */
    private Integer pollHosts() throws InterruptedException {
        List<Hosts.Host> found = discoveryWarnings.find(plan.discovery());
        if (found == null) {
            return null;
        }
        List<Hosts.Host> before = hosts;
        hosts = found;
        List<String> back = blacklist.cameBack(System.nanoTime());
        List<ElasticSlots.Place> places = places(plan.maxNp());
        boolean same = places.size() == ranks.size() && places.stream().allMatch(p -> p.worker() != null
                && ranks.get(p.worker()) == p.slot().rank());
        if (same) {
            return null;
        }
        if (plan.resetLimit() != null && resets >= plan.resetLimit()) {
            message("kolo: " + hostChange(before, found, back) + "; reset limit " + plan.resetLimit()
                    + " reached (--reset-limit), stopping the job");
            return 1;
        }
        return nextGeneration(hostChange(before, found, back), plan.maxNp());
    }

    private static String hostChange(List<Hosts.Host> before, List<Hosts.Host> after, List<String> back) {
        Set<String> old = before.stream().map(Hosts.Host::name).collect(Collectors.toSet());
        Set<String> now = after.stream().map(Hosts.Host::name).collect(Collectors.toSet());
        List<String> parts = new ArrayList<>();
        after.stream().filter(h -> !old.contains(h.name())).forEach(h -> parts.add("host " + h.name() + " added"));
        before.stream().filter(h -> !now.contains(h.name())).forEach(h -> parts.add("host " + h.name() + " removed"));
        back.stream().filter(h -> old.contains(h) && now.contains(h))
                .forEach(h -> parts.add("host " + h + " back after its blacklist cooldown"));
        return parts.isEmpty() ? "hosts' slots changed" : String.join(", ", parts);
    }

    /**
     * Publishes the next generation with up to {@code size} ranks (waiting up to the elastic timeout for min-np slots)
     * and starts its new workers; null on success, else the exit code the job fails with (0: use the caller's).
     */
    private Integer nextGeneration(String why, int size) throws InterruptedException {
        long deadline = System.nanoTime() + plan.elasticTimeout().toNanos();
        int available;
        while ((available = usableSlots()) < plan.minNp()) {
            long now = System.nanoTime();
            if (!plan.discovery().changes() && !blacklist.coolingDown(now) && !blacklist.describe(now).isEmpty()) {
                message("kolo: " + why + "; every usable host is blacklisted (" + blacklist.describe(now)
                        + "): " + available + " slots left, --min-np " + plan.minNp() + ", stopping the job");
                return 1;
            }
            if (now - deadline > 0) {
                List<String> excluded = hosts.stream().map(Hosts.Host::name).filter(h -> blacklist.excluded(h, now))
                        .toList();
                boolean all = !hosts.isEmpty() && excluded.size() == hosts.size();
                message("kolo: " + why + (all ? "; every host is blacklisted (" + String.join(", ", excluded) + "): "
                        : "; only ") + available + " slots available, fewer than --min-np "
                        + plan.minNp() + ", for longer than --elastic-timeout " + plan.elasticTimeout().toSeconds()
                        + " s; stopping the job");
                return 1;
            }
            Thread.sleep(POLL);
            List<Hosts.Host> found = discoveryWarnings.find(plan.discovery());
            hosts = found != null ? found : hosts;
        }
        List<ElasticSlots.Place> places = places(size);
        generation++;
        if (generation > 0) {
            resets++;
        }
        Set<String> staying = places.stream().map(ElasticSlots.Place::worker).filter(w -> w != null)
                .collect(Collectors.toSet());
        Map<String, Integer> next = new LinkedHashMap<>();
        List<ElasticSlots.Place> fresh = new ArrayList<>();
        for (ElasticSlots.Place p : places) {
            String id = p.worker() != null ? p.worker() : "w" + nextWorker++;
            if (p.worker() == null) {
                fresh.add(new ElasticSlots.Place(id, p.slot()));
            }
            next.put(id, p.slot().rank());
            hostOf.put(id, p.slot().host());
            server.put(ElasticGeneration.assignmentKey(generation, id), assignment(p.slot()).encode());
        }
        server.put(ElasticGeneration.reasonKey(generation), why);
        server.put(ElasticGeneration.LATEST, Integer.toString(generation));
        for (String gone : ranks.keySet()) {
            if (!staying.contains(gone)) {
                workers.stopLater(gone, REMOVED_GRACE);
            }
        }
        ranks = next;
        supervisor.view().generation(generation, places.size(), ElasticGeneration.scope(server, generation));
        if (generation > 0) {
            supervisor.view().event("reset", "reset " + resets + ": " + why + "; job " + generation + " has "
                    + places.size() + " ranks (" + describe(places) + ")");
            message("kolo: reset " + resets + (plan.resetLimit() != null ? " of at most " + plan.resetLimit() : "")
                    + ": " + why + "; job " + generation + " has " + places.size() + " ranks ("
                    + describe(places) + ")");
        }
        if (plan.display().map()) {
            // Each job of an elastic run has a map of its own: printed as it forms, as a static run prints its one.
            message(JobStart.displayMap(places.stream().map(ElasticSlots.Place::slot).toList()));
        }
        for (ElasticSlots.Place p : fresh) {
            try {
                String host = p.slot().host();
                WorkerStart how = plan.isLocal().test(host) ? new LocalStart(host) : office != null
                        ? new AgentStart(plan.agent(), host, office, plan.startTimeoutSeconds())
                        : new SshStart(plan.ssh(), host);
                Map<String, String> env = workerEnvironment.of(p.worker(), p.slot(), generation);
                if (plan.verbose()) {
                    Map<String, String> kolo = new LinkedHashMap<>(env);
                    kolo.keySet().removeAll(plan.exports().keySet());
                    int rank = p.slot().rank();
                    message(RankEnvironment.describe(rank, plan.command(), kolo, plan.exports())
                            + (how.remote() ? "\nkolo: rank " + rank + " runs on " + host + (office != null
                            ? " through the rsh agent " + plan.agent().describe() : " over ssh") : ""));
                }
                workers.start(p.worker(), new RankLaunch(p.slot().rank(), plan.command(), env,
                        plan.workingDirectory(), how));
            } catch (IOException e) {
                if (supervisor.stopped()) {
                    return supervisor.stoppedCode();  // refused because the launcher is stopping: nothing to report
                }
                message("kolo: cannot start worker " + p.worker() + " on " + p.slot().host() + ": " + e.getMessage());
                return Supervisor.START_FAILED;
            }
        }
        return null;
    }

    private List<ElasticSlots.Place> places(int size) {
        List<ElasticSlots.Current> current = new ArrayList<>();
        ranks.forEach((id, rank) -> current.add(new ElasticSlots.Current(id, hostOf.get(id), rank)));
        List<Hosts.Host> usable = usableHosts();
        int slots = Hosts.totalSlots(usable);
        return ElasticSlots.assign(current, usable, Math.min(Math.min(size, plan.maxNp()), slots));
    }

    private List<Hosts.Host> usableHosts() {
        long now = System.nanoTime();
        return hosts.stream().filter(h -> !blacklist.excluded(h.name(), now)).toList();
    }

    private int usableSlots() {
        return Hosts.totalSlots(usableHosts());
    }

    private static ElasticGeneration.Assignment assignment(RankMap.Slot s) {
        return new ElasticGeneration.Assignment(s.topology(), s.host());
    }

    private static String describe(List<ElasticSlots.Place> places) {
        Map<String, Integer> perHost = new LinkedHashMap<>();
        places.forEach(p -> perHost.merge(p.slot().host(), 1, Integer::sum));
        return perHost.entrySet().stream().map(e -> e.getKey() + ":" + e.getValue()).collect(Collectors.joining(","));
    }

    private void message(String line) {
        synchronized (err) {
            err.println(line);
            err.flush();
        }
    }
}
