package io.kolo.launcher.start;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

/**
 * How one worker starts: the only thing that differs between a rank on this host ({@link LocalStart}), one on another
 * host over ssh ({@link SshStart}) and one of this node's ranks in a job with a launcher per node ({@link NodeStart}).
 * Every runtime (a static job, an elastic one, a node of an {@code --nnodes} one) starts its workers through this,
 * relays their output and sees their exits the same way; what a start method decides is the command line, how the
 * worker gets its environment, how it is stopped, and how messages name it.
 *
 * <p>The methods here all run the worker behind the {@link RankWrapper}, which reads the environment from its stdin and
 * ends the worker when stdin closes. A start method whose command runs without stdin (an rsh agent such as the MPI
 * Operator's {@code kubexec.sh}) says so with {@link #offersStdin()} false: it must put the environment on its command
 * line itself, rank 0 cannot read the launcher's stdin through it, and it is stopped by signals alone.
 */
public interface WorkerStart {

    /** The argv that runs {@code program} in {@code workingDirectory} with {@code env}. */
    List<String> command(List<String> program, String workingDirectory, Map<String, String> env);

    /**
     * Whether the started command reads what the launcher writes on its stdin: the worker's environment, and its
     * liveness (the worker ends when stdin closes). Only then can rank 0 read the launcher's own stdin.
     */
    boolean offersStdin();

    /**
     * Whether the process the launcher starts is a connection to a worker elsewhere: stopped by closing its stdin (the
     * far side then stops the worker), and what it started here is not the worker's.
     */
    boolean remote();

    /** The host the worker runs on, or null for this host when messages need not name it. */
    String host();

    /** How the launcher's messages name the worker with {@code rank}: "rank 3", "rank 3 on host h", ... */
    String describe(int rank);

    /**
     * The cause when exit code {@code code} is the start method's own failure rather than the worker's (ssh's 255 for
     * a lost connection), else null.
     */
    default String ownFailure(int rank, int code) {
        return null;
    }

    /**
     * The worker's exit code as the launcher takes it, from the started process's {@code code}: an agent that failed
     * before the worker started is the launcher's failure to start it (127), whatever the agent exited with.
     */
    default int exitCode(int code) {
        return code;
    }

    /** The started process's stderr as the launcher relays it (a start method may hold back what is its own). */
    default InputStream errors(InputStream raw) {
        return raw;
    }

    /** Asks a remote worker to stop before its connection's stdin is closed (nothing to do when that is the way). */
    default void askToStop() {
    }

    /** Checks here what can be checked before the worker starts (that its program exists on this host). */
    default void check(List<String> program, String workingDirectory) throws IOException {
        if (!remote()) {
            // The wrapper would start and then fail to exec; say it here, as a plain start would.
            Executables.require(program.getFirst(), System.getenv("PATH"), workingDirectory);
        }
    }

    /**
     * Hands the started process {@code p} what it reads on stdin: the environment line, kept open (closing it stops
     * the worker); stdin is closed at once when this method offers none.
     */
    default void handOver(Process p, Map<String, String> env) throws IOException {
        OutputStream stdin = p.getOutputStream();
        if (offersStdin()) {
            stdin.write(RankWrapper.environmentLine(env).getBytes(StandardCharsets.UTF_8));
            stdin.flush();
        } else {
            stdin.close();
        }
    }
}
