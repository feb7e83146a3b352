package io.kolo.view;

import io.kolo.KoloException;
import io.kolo.bootstrap.KeyValueStore;
import io.kolo.bootstrap.KoloSettings;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;

/**
 * The job view where no launcher holds it (under {@code mpirun} or {@code srun}): the process that serves the job's
 * store (rank 0) also polls its ranks' snapshots from it, serves the view on {@code KOLO_DASHBOARD_PORT} (at
 * {@code KOLO_DASHBOARD_BIND}) and writes {@code KOLO_REPORT} when it leaves the job.
 */
public final class ViewHolder implements AutoCloseable {
    private final JobView view;
    private final DashboardServer server;
    private final Path report;

    private ViewHolder(JobView view, DashboardServer server, Path report) {
        this.view = view;
        this.server = server;
        this.report = report;
    }

    /**
     * Holds the view of the job of {@code size} ranks whose store is {@code store}, when {@code env} asks for one
     * ({@code KOLO_DASHBOARD_PORT} or {@code KOLO_REPORT}); prints the URL on this process's stderr.
     *
     * @throws KoloException with one line naming the setting when the view cannot be served there
     */
    public static Optional<ViewHolder> open(Map<String, String> env, int size, KeyValueStore store) {
        Optional<Integer> port = KoloSettings.DASHBOARD_PORT.ifSet(env);
        String report = KoloSettings.REPORT.from(env);
        if (port.isEmpty() && report == null) {
            return Optional.empty();
        }
        // A Spark executor's command line says nothing of the job: KoloSpark names it (KOLO_JOB_NAME).
        String named = KoloSettings.JOB_NAME.from(env);
        String command = named != null ? named : ProcessHandle.current().info().commandLine().orElse("");
        JobView view = new JobView(command, size, false,
                Duration.ofMillis(KoloSettings.VIEW_INTERVAL_MS.from(env)));
        view.watch(store);
        DashboardServer server = null;
        if (port.isPresent()) {
            try {
                server = DashboardServer.start(view, KoloSettings.DASHBOARD_BIND.from(env), port.get());
            } catch (IllegalArgumentException e) {
                throw new KoloException(KoloSettings.DASHBOARD_PORT.name() + "=" + port.get() + ": "
                        + e.getMessage());
            }
            System.err.println("kolo: job view at " + server.url());
            System.err.flush();
        }
        view.start();
        return Optional.of(new ViewHolder(view, server, report == null ? null : Path.of(report)));
    }

    /** The port the view is served on, or -1. */
    public int port() {
        return server == null ? -1 : server.port();
    }

    /**
     * This rank leaves the job: the last snapshots are read, the view ends as succeeded (a rank that leaves by
     * {@code Kolo.shutdown()} finished its part), is written to {@code KOLO_REPORT}, and is no longer served.
     */
    @Override
    public void close() {
        view.poll();
        view.ended(JobView.SUCCEEDED);
        view.close();
        if (report != null) {
            try {
                ReportFile.write(report, view.json());
                System.err.println("kolo: job report written to " + report.toAbsolutePath());
            } catch (IOException | RuntimeException e) {
                System.err.println("kolo: cannot write the job report " + report + " (" + KoloSettings.REPORT.name()
                        + "): " + e.getMessage());
            }
        }
        if (server != null) {
            server.close();
        }
    }
}
