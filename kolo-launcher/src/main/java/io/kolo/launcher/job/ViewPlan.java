package io.kolo.launcher.job;

import io.kolo.bootstrap.IoReason;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * The job view a {@code kolo run} asks for: served live on {@code dashboardPort} ({@code --dashboard}; 0 picks a free
 * port; null: not served) at {@code bind} ({@code --dashboard-bind}; null: 127.0.0.1), and frozen into
 * {@code report} ({@code --report}; null: none) when the job ends; {@code command} is the {@code kolo run} command
 * line its header shows (null: the program's).
 */
public record ViewPlan(Integer dashboardPort, String bind, Path report, String command) {
    public static final ViewPlan NONE = new ViewPlan(null, null, null, null);

    /**
     * Checks what can be checked before anything starts: the port's range, and that the report can be written where
     * it is asked for (a missing directory, a directory in its place, no permission), each a one-line usage error.
     */
    public ViewPlan {
        if (dashboardPort != null && (dashboardPort < 0 || dashboardPort > 65535)) {
            throw new UsageException("--dashboard " + dashboardPort + ": give a TCP port from 1 to 65535, or 0 for a"
                    + " free one");
        }
        if (bind != null && dashboardPort == null) {
            throw new UsageException("--dashboard-bind " + bind + " goes with --dashboard PORT");
        }
        if (report != null) {
            report = report.toAbsolutePath().normalize();
            checkWritable(report);
        }
    }

    /** Whether the ranks publish what they do (KOLO_VIEW=1): the view is served or reported. */
    public boolean on() {
        return dashboardPort != null || report != null;
    }

    private static void checkWritable(Path report) {
        if (Files.isDirectory(report)) {
            throw new UsageException("--report " + report + " is a directory: give the HTML file to write");
        }
        Path dir = report.getParent();
        if (dir == null || !Files.isDirectory(dir)) {
            throw new UsageException("--report " + report + ": no such directory " + dir + " (create it first)");
        }
        boolean existed = Files.exists(report);
        // Opened for writing, as it will be at the end: only that says whether this user may write it there.
        try (var out = Files.newOutputStream(report, StandardOpenOption.CREATE, StandardOpenOption.APPEND)) {
            out.flush();
        } catch (IOException e) {
            throw new UsageException("--report " + report + " cannot be written: " + IoReason.of(e));
        } finally {
            if (!existed) {
                try {
                    Files.deleteIfExists(report);
                } catch (IOException ignored) {
                    // Written over at the end anyway.
                }
            }
        }
    }
}
