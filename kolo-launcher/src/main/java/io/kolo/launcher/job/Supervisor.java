package io.kolo.launcher.job;

import io.kolo.launcher.elastic.HostDiscovery;
import io.kolo.launcher.start.Subreaper;

import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Duration;

/**
 * Runs one job on this launcher to its end, as torchrun's agent does: its {@link RestartPolicy} starts the workers, and
 * every event of the job, a worker's exit or a failure elsewhere, reaches the policy from one queue
 * ({@link WorkerGroup#next}), on this one thread, which also starts every worker. Ctrl-C, SIGTERM and a closed output
 * ({@code kolo run ... | head}) stop every worker the same way, whatever the policy.
 */
public final class Supervisor {
    public static final int START_FAILED = 127;
    /** The launcher's stdout was closed under it: a shell's code for a process that SIGPIPE ended. */
    static final int OUTPUT_CLOSED = 141;
    /** The result once stopped by a signal (the JVM exits with the signal's own code: 130 or 143). */
    static final int STOPPED = 143;
    public static final Duration DEFAULT_GRACE = Duration.ofSeconds(5);
    /** The result once {@link #abort}ed. */
    static final int ABORTED = 1;
    private static final Duration POLL = Duration.ofMillis(100);
    // How long Ctrl-C waits for the job's end to write its report before writing it itself.
    private static final Duration FINISH_WAIT = Duration.ofSeconds(5);

    private final RestartPolicy policy;
    private final WorkerGroup group;
    private final LauncherView view;
    private final PrintStream messages;
    // Counted down once run() has finished the job (its view's report written), for a Ctrl-C that waits for it.
    private final java.util.concurrent.CountDownLatch done = new java.util.concurrent.CountDownLatch(1);
    private volatile boolean stopped;
    private volatile boolean outputClosed;
    private volatile boolean aborted;

    public Supervisor(RestartPolicy policy, PrintStream out, PrintStream err, Path outputDir, Duration grace) {
        this(policy, out, err, outputDir, grace, LauncherView.OFF);
    }

    /** @param view the job's view, fed with the workers' starts, output and exits and finished with the job */
    public Supervisor(RestartPolicy policy, PrintStream out, PrintStream err, Path outputDir, Duration grace,
                      LauncherView view) {
        this.policy = policy;
        this.messages = err;
        this.view = view;
        this.group = new WorkerGroup(out, err, outputDir, grace, this::outputClosed, view);
    }

    public WorkerGroup group() {
        return group;
    }

    /** The job's view ({@link LauncherView#OFF} when none was asked for). */
    public LauncherView view() {
        return view;
    }

    /** Runs the job to its end; the launcher's exit code. */
    public int run() throws InterruptedException {
        // No worker starts before this process adopts orphans (RunCommand made it a subreaper where it could).
        Subreaper.settle();
        int result = 1;
        try {
            Integer code = policy.start(this);
            while (code == null) {
                WorkerGroup.Event event = group.next(POLL);
                code = event != null ? policy.handle(event) : policy.idle();
                // Here, on the thread that starts every worker (see WorkerGroup.reapOrphans).
                group.reapOrphans();
            }
            result = code;
            return code;
        } finally {
            try {
                // Before the store goes: a worker still waiting on it would fail with a stack trace about it instead.
                if (!group.finish()) {
                    message("kolo: some processes did not exit even after SIGKILL");
                }
                // Before the store goes too: the view reads the ranks' last snapshots from it.
                view.finish(stopped ? stoppedCode() : result);
                policy.close();
            } finally {
                done.countDown();
            }
        }
    }

    /** Stopped by a signal or because the output was closed: workers' exits from now on are the launcher's doing. */
    public boolean stopped() {
        return stopped;
    }

    /** The launcher's exit code once {@link #stopped()}. */
    public int stoppedCode() {
        return outputClosed ? OUTPUT_CLOSED : aborted ? ABORTED : STOPPED;
    }

    /** Called from the shutdown hook on Ctrl-C or SIGTERM: stops every worker the same way a failure does. */
    public void stop() {
        if (!claimStop(false, false)) {
            return;
        }
        HostDiscovery.stopAll();
        view.event("stop", "the launcher was interrupted (Ctrl-C or SIGTERM)");
        int alive = group.running();
        if (alive > 0) {
            message("kolo: interrupted; terminating " + alive + (alive == 1 ? " rank" : " ranks"));
        }
        if (!group.stopAll()) {
            message("kolo: some processes did not exit even after SIGKILL");
        }
        if (view.on()) {
            // The JVM ends when the shutdown hooks return: give run() the moment it needs to finish the job's view,
            // else freeze it from here, so that the report is written however the job ends.
            try {
                if (!done.await(FINISH_WAIT.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS)) {
                    view.finish(stoppedCode());
                }
            } catch (InterruptedException e) {
                view.finish(stoppedCode());
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * Stops every worker because the job must not go on ({@code reason}, one line: a rank's one-time token presented
     * twice); the launcher then exits with 1. Safe from any thread.
     */
    public void abort(String reason) {
        if (!claimStop(false, true)) {
            return;
        }
        HostDiscovery.stopAll();
        int alive = group.running();
        message(reason + (alive > 0 ? "; terminating " + alive + (alive == 1 ? " rank" : " ranks") : ""));
        if (!group.stopAll()) {
            message("kolo: some processes did not exit even after SIGKILL");
        }
    }

    /**
     * The launcher's stdout can no longer be written (its reader exited: {@code kolo run ... | head}): stop every
     * worker, as mpirun ends when SIGPIPE ends it, rather than run the job to its end with nowhere for its output to
     * go. On a thread of its own: the caller is a worker's output pump, which must go on draining its pipe meanwhile.
     */
    private void outputClosed() {
        if (!claimStop(true, false)) {
            return;
        }
        int alive = group.running();
        message("kolo: the output was closed (broken pipe); terminating " + alive + (alive == 1 ? " rank" : " ranks"));
        Thread.ofPlatform().daemon().name("kolo-output-closed").start(group::stopAll);
    }

    /** The first stop wins (a signal, or the output closed); starts are refused from then on. */
    private boolean claimStop(boolean byOutput, boolean abort) {
        synchronized (this) {
            if (stopped) {
                return false;
            }
            outputClosed = byOutput;
            aborted = abort;
            stopped = true;
        }
        group.refuseStarts();
        return true;
    }

    void message(String line) {
        synchronized (messages) {
            messages.println(line);
            messages.flush();
        }
    }
}
