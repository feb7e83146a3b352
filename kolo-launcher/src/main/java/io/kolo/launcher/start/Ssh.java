package io.kolo.launcher.start;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * How the launcher calls the system {@code ssh} client. Using the client rather than an SSH library means
 * the user's {@code ~/.ssh/config}, agent, jump hosts and known hosts all work as they do for mpirun.
 * {@code KOLO_SSH_COMMAND} (like git's {@code GIT_SSH_COMMAND}) replaces {@code ssh}, e.g.
 * {@code ssh -F cluster_config}; it is split on white space.
 *
 * @param command        the client and its own options
 * @param port           {@code -p}, or 0 for the client's default
 * @param identityFile   {@code -i}, or null
 * @param connectTimeout seconds per TCP connect ({@code ConnectTimeout})
 * @param attempts       connects per call ({@code ConnectionAttempts})
 */
public record Ssh(List<String> command, int port, Path identityFile, int connectTimeout, int attempts) {
    public static final String COMMAND_VAR = "KOLO_SSH_COMMAND";
    // Generous for a loaded host: sshd answers keepalives itself, whatever the ranks are doing.
    static final int ALIVE_INTERVAL_SECONDS = 10;
    static final int ALIVE_COUNT_MAX = 3;

    public static List<String> clientCommand(Map<String, String> env) {
        String custom = env.get(COMMAND_VAR);
        if (custom == null || custom.isBlank()) {
            return List.of("ssh");
        }
        return List.of(custom.strip().split("\\s+"));
    }

    /** The argv that runs {@code remoteCommand} (one shell command line) on {@code host}. */
    public List<String> argv(String host, String remoteCommand) {
        List<String> argv = new ArrayList<>(command);
        // BatchMode: never stop at a password or host-key prompt nobody can answer; -T: no terminal, so the
        // remote side sees EOF on its stdin when the launcher goes away (that is how remote ranks die with it).
        argv.addAll(List.of("-T", "-o", "BatchMode=yes", "-o", "ConnectTimeout=" + connectTimeout,
                "-o", "ConnectionAttempts=" + attempts));
        // A host cut off from the network closes no connection: without keepalives the launcher would hear of it
        // only when the ranks' op timeout (KOLO_TIMEOUT_SECONDS, 300 s by default) ends those that can still talk,
        // and would name one of them. With them ssh gives up on the host after 30-40 s of silence and the launcher
        // names that host. ssh keeps the first value it reads, so options in KOLO_SSH_COMMAND win over these.
        argv.addAll(List.of("-o", "ServerAliveInterval=" + ALIVE_INTERVAL_SECONDS,
                "-o", "ServerAliveCountMax=" + ALIVE_COUNT_MAX));
        if (port > 0) {
            argv.addAll(List.of("-p", Integer.toString(port)));
        }
        if (identityFile != null) {
            argv.addAll(List.of("-i", identityFile.toString()));
        }
        argv.add("--");
        argv.add(host);
        argv.add(remoteCommand);
        return argv;
    }
}
