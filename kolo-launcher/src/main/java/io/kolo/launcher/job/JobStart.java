package io.kolo.launcher.job;

import io.kolo.launcher.start.AgentOffice;
import io.kolo.launcher.start.AgentStart;
import io.kolo.launcher.start.LocalStart;
import io.kolo.launcher.start.RankLaunch;
import io.kolo.launcher.start.RankWrapper;
import io.kolo.launcher.start.SshStart;
import io.kolo.launcher.start.WorkerStart;

import io.kolo.bootstrap.RankVariables;
import io.kolo.bootstrap.RendezvousServer;
import io.kolo.launch.JobSecret;
import io.kolo.transport.ShmSegments;
import io.kolo.transport.Transports;

import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;

/**
 * Starts a planned {@code kolo run} job (a {@link StaticPlan}): checks the remote hosts over ssh, serves the
 * rendezvous, starts every rank with its variables (locally, or over ssh behind a watchdog) and waits for the job.
 */
public final class JobStart {
    private JobStart() {
    }

    /** Starts the job and waits for it; the launcher's exit code. */
    public static int execute(StaticPlan plan, PrintStream out, PrintStream err, boolean installShutdownHook)
            throws InterruptedException {
        plan.announce(err);
        if (plan.display().map()) {
            err.println(displayMap(plan.slots()));
        }
        Map<String, Preflight.Reachable> reachable = Map.of();
        boolean throughAgent = plan.agent() != null && !plan.remoteHosts().isEmpty();
        if (!plan.remoteHosts().isEmpty() && !throughAgent) {
            // Stopped while hosts are still being checked (one may take until --start-timeout), no ssh is left behind.
            Thread hook = installShutdownHook ? new Thread(Preflight::stopAll, "kolo-preflight-stop") : null;
            if (hook != null) {
                Runtime.getRuntime().addShutdownHook(hook);
            }
            try {
                reachable = Preflight.check(plan.ssh(), plan.remoteHosts(), plan.workingDirectory(),
                        java.time.Duration.ofSeconds(plan.startTimeoutSeconds()));
            } catch (Preflight.HostsUnreachable e) {
                err.println(e.getMessage());
                err.flush();
                return Supervisor.START_FAILED;
            } finally {
                if (hook != null) {
                    try {
                        Runtime.getRuntime().removeShutdownHook(hook);
                    } catch (IllegalStateException shuttingDown) {
                        // The hook is already running.
                    }
                }
            }
        }
        RendezvousAddress where;
        try {
            where = throughAgent ? RendezvousAddress.forAgents(plan.networkInterface())
                    : RendezvousAddress.choose(plan.networkInterface(), reachable);
        } catch (IllegalArgumentException e) {
            err.println("kolo: " + e.getMessage());
            return UsageException.EXIT_CODE;
        }
        LauncherView view;
        try {
            view = LauncherView.open(plan.display().view(), RankEnvironment.shellQuote(plan.command()), plan.np(),
                    false, System.getenv(), err);
        } catch (UsageException e) {
            err.println("kolo: " + e.getMessage());
            return UsageException.EXIT_CODE;
        }
        JobSecret secret = JobSecret.generate();
        RendezvousServer server;
        try {
            server = RendezvousServer.start(where.bind(), 0, secret);
        } catch (RuntimeException e) {
            err.println("kolo: " + e.getMessage());
            view.finish(1);
            return 1;
        }
        view.watch(server);
        // Segments of earlier jobs that were killed before their ranks could unlink them: on a thread of its own while
        // the ranks start, since local ranks clear them too before they size their own, and no rank waits for this.
        Thread.ofPlatform().daemon().name("kolo-stale-segments").start(ShmSegments::removeStale);
        // A token presented twice stops the job: set once the job exists, before any rank can fetch its settings.
        AtomicReference<Job> started = new AtomicReference<>();
        AgentOffice office;
        try {
            office = throughAgent ? AgentOffice.open(where.bind(), Duration.ofSeconds(plan.startTimeoutSeconds()),
                    misuse -> {
                        Job job = started.get();
                        if (job != null) {
                            job.abort(misuse);
                        }
                    }) : null;
        } catch (java.io.IOException e) {
            server.close();
            err.println("kolo: cannot listen for the ranks' agents on " + where.bind().getHostAddress() + ": "
                    + e.getMessage());
            return 1;
        }
        try (server; office) {
            int port = server.address().getPort();
            List<RankLaunch> launches = new ArrayList<>();
            for (RankMap.Slot slot : plan.slots()) {
                boolean remote = reachable.containsKey(slot.host())
                        || throughAgent && plan.remoteHosts().contains(slot.host());
                InetSocketAddress store = new InetSocketAddress(where.forHost(slot.host()), port);
                RankVariables vars = RankEnvironment.koloVars(slot, store, secret, plan.startTimeoutSeconds());
                // An interface name means the same on every host; an address is only this host's.
                if (plan.networkInterface() != null && (!remote || !isAddress(plan.networkInterface()))) {
                    vars.networkInterface(plan.networkInterface());
                }
                Map<String, String> kolo = vars.toMap();
                Map<String, String> env = new LinkedHashMap<>(plan.exports());
                env.putAll(kolo);
                if (plan.verbose()) {
                    err.println(RankEnvironment.describe(slot.rank(), plan.command(), kolo, plan.exports())
                            + (remote ? "\nkolo: rank " + slot.rank() + " runs on " + slot.host()
                            + (throughAgent ? " through the rsh agent " + plan.agent().describe() : " over ssh") : ""));
                }
                String stdin = slot.rank() == 0 && !remote && installShutdownHook ? launcherStdin() : null;
                if (stdin != null) {
                    // As mpirun: rank 0 reads what the launcher was given on stdin (a remote rank's ssh stdin carries
                    // its environment and liveness). Only from a launcher process of its own: in a JVM that runs
                    // kolo in-process (tests) fd 0 is someone else's channel.
                    env.put(RankWrapper.STDIN_FROM, stdin);
                }
                WorkerStart how = !remote ? LocalStart.THIS_HOST : throughAgent
                        ? new AgentStart(plan.agent(), slot.host(), office, plan.startTimeoutSeconds())
                        : new SshStart(plan.ssh(), slot.host());
                launches.add(new RankLaunch(slot.rank(), plan.command(), env, plan.workingDirectory(), how));
            }
            Job job = new Job(launches, FailureRecord.inStore(server, err), out, err, plan.outputDir(),
                    Supervisor.DEFAULT_GRACE, view).timestampOutput(plan.display().timestamps());
            started.set(job);
            Thread hook = installShutdownHook ? new Thread(job::stop, "kolo-shutdown") : null;
            if (hook != null) {
                Runtime.getRuntime().addShutdownHook(hook);
            }
            try {
                return job.run();
            } finally {
                // Ranks unlink their segments right after setup; this catches a job killed during setup.
                ShmSegments.removeJob(Transports.jobTag(secret));
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
     * This launcher's stdin as a path rank 0 can open, or null. Started with stdin closed, the JVM reuses descriptor 0
     * for a file of its own (the JDK's lib/modules, a jar), which is no input for rank 0.
     */
    static String launcherStdin() {
        try {
            java.nio.file.Path target = java.nio.file.Files.readSymbolicLink(java.nio.file.Path.of("/proc/self/fd/0"));
            if (target.startsWith(System.getProperty("java.home")) || target.toString().endsWith(".jar")) {
                return null;
            }
        } catch (java.io.IOException | UnsupportedOperationException noProcOrNoStdin) {
            return null;
        }
        return "/proc/" + ProcessHandle.current().pid() + "/fd/0";
    }

    /** mpirun --display-map: each host with its ranks, then one line per rank. */
    public static String displayMap(List<RankMap.Slot> slots) {
        StringBuilder sb = new StringBuilder("kolo: map of " + slots.size() + " rank" + (slots.size() == 1 ? "" : "s")
                + ":");
        Map<String, List<Integer>> byHost = new LinkedHashMap<>();
        for (RankMap.Slot s : slots) {
            byHost.computeIfAbsent(s.host(), h -> new ArrayList<>()).add(s.rank());
        }
        byHost.forEach((host, ranks) -> sb.append("\nkolo:   host ").append(host).append(": ranks ")
                .append(ranks.stream().map(String::valueOf).collect(Collectors.joining(","))));
        for (RankMap.Slot s : slots) {
            sb.append("\nkolo:   rank ").append(s.rank()).append(" on ").append(s.host()).append(": local rank ")
                    .append(s.topology().localRank()).append(" of ").append(s.topology().localSize())
                    .append(", cross rank ").append(s.topology().crossRank()).append(" of ")
                    .append(s.topology().crossSize());
        }
        return sb.toString();
    }

    private static boolean isAddress(String iface) {
        return iface.indexOf(':') >= 0 || iface.matches("\\d{1,3}(\\.\\d{1,3}){3}");
    }

}
