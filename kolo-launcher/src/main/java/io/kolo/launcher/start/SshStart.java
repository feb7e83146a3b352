package io.kolo.launcher.start;

import java.util.List;
import java.util.Map;

/**
 * A worker on another host, started by the system ssh client (in a session of its own, so Ctrl-C reaches only the
 * launcher) running the {@link RankWrapper} there; the environment travels on ssh's stdin, never on a command line.
 */
public record SshStart(Ssh ssh, String host) implements WorkerStart {
    /** ssh's own exit code when the connection failed, as opposed to the remote command's. */
    static final int SSH_FAILED = 255;

    @Override
    public List<String> command(List<String> program, String workingDirectory, Map<String, String> env) {
        return RankWrapper.detached(ssh.argv(host, RankWrapper.remoteCommand(workingDirectory, program)));
    }

    @Override
    public boolean offersStdin() {
        return true;
    }

    @Override
    public boolean remote() {
        return true;
    }

    @Override
    public String describe(int rank) {
        return "rank " + rank + " on host " + host;
    }

    @Override
    public String ownFailure(int rank, int code) {
        return code == SSH_FAILED ? describe(rank) + " lost its ssh connection (ssh exited with code " + code + ")"
                : null;
    }
}
