package io.kolo.launcher.elastic;

import io.kolo.launcher.job.LauncherView;
import io.kolo.launcher.job.RankEnvironment;
import io.kolo.launcher.job.Supervisor;
import io.kolo.launcher.job.UsageException;

import java.io.PrintStream;

/** Starts a planned elastic job and waits for it, stopping its workers on Ctrl-C or SIGTERM. */
public final class ElasticRun {
    private ElasticRun() {
    }

    public static int execute(ElasticPlan plan, PrintStream out, PrintStream err, boolean installShutdownHook)
            throws InterruptedException {
        plan.announce(err);
        LauncherView view;
        try {
            view = LauncherView.open(plan.display().view(), RankEnvironment.shellQuote(plan.command()), plan.np(),
                    true, System.getenv(), err);
        } catch (UsageException e) {
            err.println("kolo: " + e.getMessage());
            return UsageException.EXIT_CODE;
        }
        Supervisor driver = new Supervisor(new ElasticDriver(plan, err), out, err, plan.outputDir(),
                Supervisor.DEFAULT_GRACE, view);
        driver.group().timestampOutput(plan.display().timestamps());
        Thread hook = installShutdownHook ? new Thread(driver::stop, "kolo-shutdown") : null;
        if (hook != null) {
            Runtime.getRuntime().addShutdownHook(hook);
        }
        try {
            return driver.run();
        } finally {
            if (hook != null) {
                try {
                    Runtime.getRuntime().removeShutdownHook(hook);
                } catch (IllegalStateException shuttingDown) {
                    // The hook is already running and stops the workers.
                }
            }
        }
    }
}
