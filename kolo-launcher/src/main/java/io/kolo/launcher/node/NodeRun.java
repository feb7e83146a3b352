package io.kolo.launcher.node;

import io.kolo.launcher.job.Display;
import io.kolo.launcher.job.Job;
import io.kolo.launcher.job.JobPlan;
import io.kolo.launcher.job.JobStart;
import io.kolo.launcher.job.LauncherView;
import io.kolo.launcher.job.RankEnvironment;
import io.kolo.launcher.job.RankMap;
import io.kolo.launcher.job.Supervisor;
import io.kolo.launcher.job.UsageException;
import io.kolo.launcher.start.NodeStart;
import io.kolo.launcher.start.RankLaunch;

import io.kolo.KoloException;
import io.kolo.Topology;
import io.kolo.bootstrap.AdvertisedAddress;
import io.kolo.bootstrap.HostName;
import io.kolo.bootstrap.KeyValueStore;
import io.kolo.bootstrap.Placement;
import io.kolo.bootstrap.RankVariables;
import io.kolo.bootstrap.RendezvousClient;
import io.kolo.bootstrap.RendezvousServer;
import io.kolo.launch.JobSecret;
import io.kolo.transport.ShmSegments;
import io.kolo.transport.Transports;

import java.io.PrintStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.IntSupplier;

/**
 * {@code kolo run --nnodes N --node-rank R --rendezvous HOST:PORT}: one launcher per node, each starting its node's
 * S ranks (ranks {@code R*S} to {@code R*S+S-1}, local ranks 0 to S-1, cross rank R) with the usual environment.
 * Node 0's launcher serves the rendezvous store on HOST:PORT; the others connect to it. Failures work as with one
 * launcher: a rank that fails is recorded in the store, every node stops its ranks and exits non-zero
 * ({@link NodeFailures}, {@link NodeWatch}).
 */
public final class NodeRun {

    /** A validated per-node launch. */
    public record Plan(int nnodes, int nodeRank, int perNode, RendezvousEndpoint endpoint, List<String> command,
                Map<String, String> exports, List<String> warnings, Path outputDir, int startTimeoutSeconds,
                boolean verbose, String networkInterface, JobSecret secret, String hostName,
                Display display) implements JobPlan {

        /** Every node's ranks run in its launcher's working directory. */
        @Override
        public String workingDirectory() {
            return Path.of("").toAbsolutePath().toString();
        }

        public boolean isLocal(int rank) {
            return rank / perNode == nodeRank;
        }

        /**
         * Checks the node options ({@code --nnodes}, the node rank, {@code --rendezvous}, {@code --np-per-node});
         * {@code np} is -np when given. The node rank is asked for only once {@code --nnodes} is known valid.
         */
        public static Plan of(Integer nnodes, IntSupplier nodeRank, String rendezvous, Integer perNodeFlag, Integer np,
                       Map<String, String> env, List<String> command, Map<String, String> exports, List<String> warnings,
                       Path outputDir, int startTimeoutSeconds, boolean verbose, String networkInterface,
                       Display display) {
            if (nnodes == null) {
                throw new UsageException("--node-rank, --rendezvous and --np-per-node go with --nnodes N (the number"
                        + " of nodes, each running its own kolo run)");
            }
            if (nnodes < 1) {
                throw new UsageException("--nnodes must be at least 1, got " + nnodes);
            }
            int rank = nodeRank.getAsInt();
            if (rank < 0 || rank >= nnodes) {
                throw new UsageException("--node-rank must be from 0 to " + (nnodes - 1) + " for --nnodes "
                        + nnodes + ", got " + rank);
            }
            int perNode = perNode(nnodes, perNodeFlag, np);
            if (rendezvous == null) {
                throw new UsageException("--nnodes needs --rendezvous HOST[:PORT]: node 0's host name (the same on"
                        + " every node)");
            }
            RendezvousEndpoint endpoint = RendezvousEndpoint.parse(rendezvous);
            return new Plan(nnodes, rank, perNode, endpoint, command, exports, warnings, outputDir,
                    startTimeoutSeconds, verbose, networkInterface, secret(env, nnodes), hostName(env), display);
        }

        private static int perNode(int nnodes, Integer perNodeFlag, Integer np) {
            if (perNodeFlag != null) {
                if (perNodeFlag < 1) {
                    throw new UsageException("--np-per-node must be at least 1, got " + perNodeFlag);
                }
                if (np != null && np != perNodeFlag * nnodes) {
                    throw new UsageException("-np " + np + " does not match --nnodes " + nnodes
                            + " x --np-per-node " + perNodeFlag + "; give one or the other");
                }
                return perNodeFlag;
            }
            if (np == null) {
                return 1;
            }
            if (np < 1 || np % nnodes != 0) {
                throw new UsageException("-np " + np + " is not a multiple of --nnodes " + nnodes
                        + "; give --np-per-node S instead");
            }
            return np / nnodes;
        }

        private static JobSecret secret(Map<String, String> env, int nnodes) {
            String hex = env.get(RankEnvironment.SECRET);
            if (hex == null || hex.isBlank()) {
                if (nnodes == 1) {
                    return JobSecret.generate();
                }
                throw new UsageException("--nnodes " + nnodes + " needs the job secret in KOLO_SECRET, the same on"
                        + " every node (export KOLO_SECRET=$(openssl rand -hex 32) on each; kolo k8s puts it in a"
                        + " Secret)");
            }
            try {
                return JobSecret.fromHex(hex.strip());
            } catch (IllegalArgumentException e) {
                throw new UsageException(e.getMessage());
            }
        }

        private static String hostName(Map<String, String> env) {
            return HostName.local().orElseGet(() -> env.getOrDefault("HOSTNAME", "localhost"));
        }
    }

    private NodeRun() {
    }

    /** Meets the other nodes, runs this node's ranks and waits for them; the launcher's exit code. */
    public static int execute(Plan plan, PrintStream out, PrintStream err, boolean installShutdownHook)
            throws InterruptedException {
        plan.announce(err);
        Duration startTimeout = Duration.ofSeconds(plan.startTimeoutSeconds());
        long started = System.nanoTime();
        InetAddress node0;
        try {
            node0 = plan.endpoint().await(startTimeout);
        } catch (RendezvousEndpoint.Unresolved e) {
            err.println(e.getMessage());
            return Supervisor.START_FAILED;
        }
        InetSocketAddress at = new InetSocketAddress(node0, plan.endpoint().port());
        KeyValueStore store;
        try {
            store = plan.nodeRank() == 0 ? serve(plan, node0)
                    : RendezvousClient.connect(at, plan.secret(), startTimeout.minusNanos(System.nanoTime() - started));
        } catch (UsageException | IllegalArgumentException e) {
            err.println("kolo: " + e.getMessage());
            return UsageException.EXIT_CODE;
        } catch (KoloException e) {
            err.println("kolo: " + (plan.nodeRank() == 0 ? "node 0 cannot serve the rendezvous on "
                    : "node " + plan.nodeRank() + " cannot join the rendezvous on node 0 at ") + plan.endpoint() + ": "
                    + e.getMessage());
            return Supervisor.START_FAILED;
        }
        // Segments of earlier jobs that were killed before their ranks could unlink them.
        ShmSegments.removeStale();
        try (store) {
            // Node 0 holds the store, so it serves the job's view; the other nodes' ranks reach it through the store.
            LauncherView view;
            try {
                view = plan.nodeRank() != 0 ? LauncherView.OFF : LauncherView.open(plan.display().view(),
                        RankEnvironment.shellQuote(plan.command()), plan.nnodes() * plan.perNode(), false,
                        System.getenv(), err);
            } catch (UsageException e) {
                err.println("kolo: " + e.getMessage());
                return UsageException.EXIT_CODE;
            }
            view.watch(store);
            if (plan.nodeRank() != 0 && plan.display().view().on()) {
                err.println("kolo: node " + plan.nodeRank() + ": --dashboard and --report are node 0's, which holds the"
                        + " job's store; its view shows this node's ranks too");
            }
            NodeFailures failures = new NodeFailures(store, err);
            Job job = new Job(launches(plan, at, err), failures, out, err, plan.outputDir(), Supervisor.DEFAULT_GRACE,
                    view).timestampOutput(plan.display().timestamps());
            NodeWatch watch = new NodeWatch(plan, store, failures, job, err);
            watch.start();
            if (installShutdownHook) {
                // Ctrl-C is told to the other nodes as 130, SIGTERM as 143.
                StopSignal.watch();
            }
            Thread hook = installShutdownHook ? new Thread(() -> {
                watch.interrupted();
                job.stop();
                watch.stoppedBySignal();
            }, "kolo-shutdown") : null;
            if (hook != null) {
                Runtime.getRuntime().addShutdownHook(hook);
            }
            try {
                return watch.finish(job.run());
            } finally {
                ShmSegments.removeJob(Transports.jobTag(plan.secret()));
                if (hook != null) {
                    try {
                        Runtime.getRuntime().removeShutdownHook(hook);
                    } catch (IllegalStateException shuttingDown) {
                        // The hook is already running and will finish the job off.
                    }
                }
            }
        }
    }

    /**
     * Node 0 serves the store on the address the rendezvous name resolves to, which must be one of its own (the
     * other nodes dial it), or on {@code --network-interface}.
     */
    private static RendezvousServer serve(Plan plan, InetAddress resolved) {
        InetAddress bind = resolved;
        if (plan.networkInterface() != null) {
            bind = AdvertisedAddress.ofInterface(plan.networkInterface());
        } else if (!isOwn(resolved)) {
            throw new UsageException("--rendezvous " + plan.endpoint() + " resolves to " + resolved.getHostAddress()
                    + " on node 0, which is not an address of this host: it must name node 0, where the rendezvous"
                    + " is served (or give --network-interface)");
        }
        return RendezvousServer.start(bind, plan.endpoint().port(), plan.secret());
    }

    private static boolean isOwn(InetAddress a) {
        try {
            return a.isLoopbackAddress() || NetworkInterface.getByInetAddress(a) != null;
        } catch (SocketException e) {
            return false;
        }
    }

    private static List<RankLaunch> launches(Plan plan, InetSocketAddress store, PrintStream err) {
        List<RankLaunch> launches = new ArrayList<>();
        // Every node runs perNode ranks, node after node.
        List<Topology> placed = Placement.packed(java.util.Collections.nCopies(plan.nnodes(), plan.perNode()));
        List<RankMap.Slot> slots = new ArrayList<>();
        for (int local = 0; local < plan.perNode(); local++) {
            slots.add(new RankMap.Slot(placed.get(plan.nodeRank() * plan.perNode() + local), plan.hostName()));
        }
        if (plan.display().map()) {
            // A node knows its own ranks only: each node prints its part of the job's map.
            err.println("kolo: node " + plan.nodeRank() + " of " + plan.nnodes() + " runs ranks "
                    + slots.getFirst().rank() + "-" + slots.getLast().rank() + " of " + plan.nnodes() * plan.perNode());
            err.println(JobStart.displayMap(slots));
        }
        for (RankMap.Slot slot : slots) {
            RankVariables vars = RankEnvironment.koloVars(slot, store, plan.secret(), plan.startTimeoutSeconds());
            if (plan.networkInterface() != null) {
                vars.networkInterface(plan.networkInterface());
            }
            Map<String, String> kolo = vars.toMap();
            Map<String, String> env = new LinkedHashMap<>(plan.exports());
            env.putAll(kolo);
            if (plan.verbose()) {
                err.println(RankEnvironment.describe(slot.rank(), plan.command(), kolo, plan.exports()));
            }
            launches.add(new RankLaunch(slot.rank(), plan.command(), env, plan.workingDirectory(),
                    new NodeStart(plan.nodeRank(), plan.hostName())));
        }
        return launches;
    }
}
