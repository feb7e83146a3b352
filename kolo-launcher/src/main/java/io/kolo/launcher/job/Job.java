package io.kolo.launcher.job;

import io.kolo.launcher.start.RankLaunch;

import io.kolo.bootstrap.KeyValueStore;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/**
 * A static job's {@link RestartPolicy}, fail fast: starts every rank, and when one fails (or the job fails elsewhere:
 * another node's rank, a node lost) records the failure, lets the others fail on their own naming it for a moment,
 * then stops them all, descendants included, so that no rank is left waiting forever on a peer that is gone. The
 * launcher exits with the first failure's code. torchrun's view of the same: an elastic job with min = max and no
 * restart.
 */
public final class Job implements RestartPolicy {
    /** How long the other ranks may take to fail on their own after one rank died, before they are terminated. */
    static final Duration FAIL_FAST_WINDOW = Duration.ofSeconds(5);

    private final List<RankLaunch> launches;
    private final FailureRecord failures;
    private final Supervisor supervisor;
    private final WorkerGroup group;
    // The failure of one of this launcher's own ranks, once seen.
    private volatile FailureRecord.Failure own;
    // A failure on another node that this node's ranks are being stopped for.
    private volatile FailureRecord.Failure elsewhere;

    public Job(List<RankLaunch> launches, KeyValueStore store, PrintStream out, PrintStream err, Path outputDir,
        Duration grace) {
        this(launches, FailureRecord.inStore(store, err), out, err, outputDir, grace);
    }

    public Job(List<RankLaunch> launches, FailureRecord failures, PrintStream out, PrintStream err, Path outputDir,
        Duration grace) {
        this(launches, failures, out, err, outputDir, grace, LauncherView.OFF);
    }

    /** @param view the job's view, which sees every rank's start, output and exit */
    public Job(List<RankLaunch> launches, FailureRecord failures, PrintStream out, PrintStream err, Path outputDir,
        Duration grace, LauncherView view) {
        this.launches = launches;
        this.failures = failures;
        this.supervisor = new Supervisor(this, out, err, outputDir, grace, view);
        this.group = supervisor.group();
    }

    /** Prefixes every line of the ranks' output with the time it arrived (mpirun --timestamp-output). */
    public Job timestampOutput(boolean on) {
        group.timestampOutput(on);
        return this;
    }

    /** Runs the job to the end; the exit code of the first rank that failed, or 0. */
    public int run() throws InterruptedException {
        return supervisor.run();
    }

    /** Called from the shutdown hook on Ctrl-C or SIGTERM: stop every rank the same way a failure does. */
    public void stop() {
        supervisor.stop();
    }

    /** Stops every rank because the job must not go on ({@code reason}, one line); the launcher exits with 1. */
    public void abort(String reason) {
        supervisor.abort(reason);
    }

    /** The job is ending: stopped, or failed here or elsewhere. */
    public boolean ending() {
        return supervisor.stopped() || elsewhere != null || own != null;
    }

    /**
     * A rank on another node failed (or that node was lost): this node's ranks stop as for a local failure, after the
     * same window in which Kolo ranks fail on their own naming it. Reaches the supervisor as every other event.
     */
    public void failElsewhere(FailureRecord.Failure failure) {
        group.failedElsewhere(failure);
    }

    @Override
    public Integer start(Supervisor s) {
        for (int i = 0; i < launches.size(); i++) {
            RankLaunch launch = launches.get(i);
            try {
                group.start(Integer.toString(i), launch);
            } catch (IOException e) {
                if (s.stopped()) {
                    return s.stoppedCode();
                }
                s.message("kolo: cannot start rank " + launch.rank() + " (" + String.join(" ", launch.program())
                        + "): " + e.getMessage());
                return Supervisor.START_FAILED;
            }
        }
        return null;
    }

    @Override
    public Integer handle(WorkerGroup.Event event) throws InterruptedException {
        switch (event) {
            case WorkerGroup.Exited exit -> {
                int rank = exit.launch().rank();
                if (exit.code() != 0 && !ending()) {
                    // Record before killing anyone, so ranks that notice the failure first can name the cause.
                    own = failures.record(exit.launch(), exit.code());
                    supervisor.view().exited(rank, exit.code(), own.cause());
                    failFast(own.cause(), "the other ", exit.launch());
                } else {
                    supervisor.view().exited(rank, exit.code(), exit.code() == 0 ? null : stoppedBecause(exit));
                }
            }
            case WorkerGroup.FailedElsewhere e -> {
                if (!ending()) {
                    elsewhere = e.failure();
                    supervisor.view().event("failure", elsewhere.cause());
                    failFast(elsewhere.cause(), "this node's ", null);
                }
            }
        }
        if (!group.alive().isEmpty()) {
            return null;
        }
        if (own != null) {
            return own.code();
        }
        if (elsewhere != null) {
            return elsewhere.code();
        }
        return supervisor.stopped() ? supervisor.stoppedCode() : 0;
    }

    /** Why a rank that exited non-zero after the job began to end did: it was stopped, for the job's failure. */
    private String stoppedBecause(WorkerGroup.Exited exit) {
        FailureRecord.Failure first = own != null ? own : elsewhere;
        return exit.launch().describe() + " exited with code " + exit.code() + (first != null
                ? " after the job failed: " + first.cause() : supervisor.stopped() ? " when the launcher was stopped"
                : "");
    }

    /**
     * Says why the job ends (with a hint when {@code failed}, this launcher's own rank, lacked Kolo on its class path).
     * Kolo ranks notice a dead peer within moments and exit naming it; give them that moment so their explanation
     * reaches the user, then stop whatever is still running.
     */
    private void failFast(String cause, String others, RankLaunch failed) throws InterruptedException {
        int alive = group.running();
        supervisor.message("kolo: " + cause + (alive == 0 ? "" : "; terminating " + others + alive
                + (alive == 1 ? " rank" : " ranks")));
        if (failed != null) {
            KoloClassPath.hintFor(failed.program(), failed.workingDirectory()).ifPresent(supervisor::message);
        }
        group.awaitExit(FAIL_FAST_WINDOW);
        if (!group.stopAll()) {
            supervisor.message("kolo: some processes did not exit even after SIGKILL");
        }
    }
}
