package io.kolo.launcher.job;

import io.kolo.bootstrap.IoReason;
import io.kolo.bootstrap.KeyValueStore;
import io.kolo.bootstrap.KoloSettings;
import io.kolo.view.DashboardServer;
import io.kolo.view.JobView;
import io.kolo.view.ReportFile;

import java.io.IOException;
import java.io.PrintStream;
import java.time.Duration;
import java.util.Map;

/**
 * The job view of a job this launcher runs (static, elastic, or node 0 of an {@code --nnodes} one): the
 * {@link JobView} it feeds with what it sees of the workers (starts, output, exits, resets), served live under
 * {@code --dashboard} and written to {@code --report} when the job ends, however it ends. With neither asked for, every
 * method does nothing.
 */
public final class LauncherView {
    /** No view: nothing is kept, served or written. */
    public static final LauncherView OFF = new LauncherView(null, null, null, null);

    private final JobView view;
    private final DashboardServer server;
    private final ViewPlan plan;
    private final PrintStream err;
    private boolean finished;

    private LauncherView(JobView view, DashboardServer server, ViewPlan plan, PrintStream err) {
        this.view = view;
        this.server = server;
        this.plan = plan;
        this.err = err;
    }

    /**
     * Opens the view {@code plan} asks for, before any worker starts: serves it (and prints its URL once) under
     * {@code --dashboard}.
     *
     * @param command the program's command line, for the page's header when {@code plan} names no command
     * @param size    the number of ranks the job starts with
     * @throws UsageException when the dashboard cannot be served (the port in use, the address not this host's)
     */
    public static LauncherView open(ViewPlan plan, String command, int size, boolean elastic,
                                    Map<String, String> launcherEnv, PrintStream err) {
        if (plan == null || !plan.on()) {
            return OFF;
        }
        long interval = KoloSettings.VIEW_INTERVAL_MS.from(launcherEnv);
        JobView view = new JobView(plan.command() != null ? plan.command() : command, size, elastic,
                Duration.ofMillis(interval));
        DashboardServer server = null;
        if (plan.dashboardPort() != null) {
            try {
                server = DashboardServer.start(view, plan.bind(), plan.dashboardPort());
            } catch (IllegalArgumentException e) {
                throw new UsageException("--dashboard " + plan.dashboardPort() + ": " + e.getMessage()
                        + " (no rank was started)");
            }
            synchronized (err) {
                err.println("kolo: job view at " + server.url());
                err.flush();
            }
        }
        view.start();
        return new LauncherView(view, server, plan, err);
    }

    /** Whether a view is kept. */
    public boolean on() {
        return view != null;
    }

    /** The port the dashboard serves on, or -1. */
    public int port() {
        return server == null ? -1 : server.port();
    }

    /** The ranks publish to {@code store} (the job's store). */
    public void watch(KeyValueStore store) {
        if (view != null) {
            view.watch(store);
        }
    }

    /** An elastic job's generation {@code generation} formed with {@code size} ranks, publishing to {@code scope}. */
    public void generation(int generation, int size, KeyValueStore scope) {
        if (view != null) {
            view.generation(generation, size, scope);
        }
    }

    void started(int rank, String host, long pid) {
        if (view != null) {
            view.rankStarted(rank, host, pid);
        }
    }

    void output(int rank, String line) {
        if (view != null) {
            view.output(rank, line);
        }
    }

    /** Rank {@code rank} exited with {@code code}; {@code cause} says why when it failed (null: not known). */
    public void exited(int rank, int code, String cause) {
        if (view != null) {
            view.rankExited(rank, code, cause);
        }
    }

    /** Something happened to the job (an elastic reset, a stop). */
    public void event(String kind, String message) {
        if (view != null) {
            view.event(kind, message);
        }
    }

    /**
     * The job is over with the launcher's exit {@code code}: the last snapshots are read, the view frozen into the
     * report, and the dashboard closed. Only the first call counts (the job's end, or Ctrl-C's shutdown hook, whichever
     * comes first).
     */
    public void finish(int code) {
        if (view == null) {
            return;
        }
        synchronized (this) {
            if (finished) {
                return;
            }
            finished = true;
        }
        view.poll();
        view.ended(code == 0 ? JobView.SUCCEEDED : JobView.FAILED);
        view.close();
        if (plan.report() != null) {
            try {
                ReportFile.write(plan.report(), view.json());
                message("kolo: job report written to " + plan.report());
            } catch (IOException | RuntimeException e) {
                message("kolo: cannot write the job report " + plan.report() + ": "
                        + (e instanceof IOException io ? IoReason.of(io) : e.getMessage()));
            }
        }
        if (server != null) {
            server.close();
        }
    }

    private void message(String line) {
        synchronized (err) {
            err.println(line);
            err.flush();
        }
    }
}
