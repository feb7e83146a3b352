package io.kolo.launcher.job;

import io.kolo.launcher.elastic.ElasticPlan;
import io.kolo.launcher.node.NodeRun;

import java.io.PrintStream;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * What every {@code kolo run} job plans, whichever runtime runs it ({@link StaticPlan}: a static job on one
 * launcher; {@link ElasticPlan}; {@link NodeRun.Plan}: this node's share of a job with a launcher per node): the
 * program and what it runs with, and what the launcher shows besides the workers' output. Where the workers run (slots,
 * hosts) and the {@link RestartPolicy} are each runtime's own part of its plan.
 */
public interface JobPlan {

    /** The program every worker runs. */
    List<String> command();

    /** What every worker gets on top of its {@code KOLO_*} job variables. */
    Map<String, String> exports();

    String workingDirectory();

    int startTimeoutSeconds();

    /** Print each worker's command line and variables. */
    boolean verbose();

    /** The interface for the rendezvous and the data plane, or null. */
    String networkInterface();

    /** Also write each worker's output under DIR/rank.N; null: no. */
    Path outputDir();

    /** What was planned with a warning, one line each. */
    List<String> warnings();

    /** The map of ranks (--display-map), timestamps (--timestamp-output), the accepted options ignored. */
    Display display();

    /** The lines said before any worker starts: the warnings, and under --verbose the options ignored. */
    default void announce(PrintStream err) {
        warnings().forEach(err::println);
        if (verbose()) {
            display().ignored().forEach(err::println);
        }
    }
}
