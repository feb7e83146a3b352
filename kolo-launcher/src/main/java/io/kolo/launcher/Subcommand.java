package io.kolo.launcher;

import io.kolo.launcher.job.UsageException;
import java.io.PrintStream;

/**
 * One {@code kolo} subcommand after picocli has filled in its options. Each subcommand class is
 * listed in {@link Main}'s {@code subcommands} and implements this, so Main dispatches without
 * knowing what any of them do.
 */
public interface Subcommand {
    /**
     * Runs the command and returns the process exit code. Throw {@link UsageException} for bad input
     * (printed as one line, exit 2).
     *
     * @param installShutdownHook false when called in-process by tests (no hooks, no System.exit)
     */
    int call(PrintStream out, PrintStream err, boolean installShutdownHook) throws InterruptedException;
}
