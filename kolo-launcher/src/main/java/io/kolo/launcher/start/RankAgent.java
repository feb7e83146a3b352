package io.kolo.launcher.start;

import io.kolo.bootstrap.RetryDelay;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * What an rsh agent runs on the rank's host in place of the ssh command ({@link AgentStart}): fetches the rank's
 * environment from the launcher with the one-time token it was given ({@link AgentExchange}), runs the rank behind the
 * {@link RankWrapper} with that environment on the wrapper's stdin, and keeps a heartbeat with the launcher. When the
 * launcher goes (killed, even with SIGKILL, or cut off) or asks it to stop, it closes the wrapper's stdin, so the
 * wrapper ends the rank and what it started (TERM, grace, KILL); it exits with the rank's exit code.
 *
 * <p>Arguments: {@code ADDRESS:PORT[,ADDRESS:PORT...] TOKEN CONNECT_SECONDS WORKING_DIRECTORY PROGRAM [ARGS...]}.
 */
public final class RankAgent {
    private static final Duration CONNECT = Duration.ofSeconds(3);

    private final String where = hostName();
    private final Object writing = new Object();
    private volatile OutputStream rankStdin;
    private volatile boolean stopping;

    private RankAgent() {
    }

    public static void main(String[] args) {
        if (args.length < 5) {
            System.err.println("kolo: rank agent: usage: ADDRESS:PORT[,...] TOKEN CONNECT_SECONDS WORKING_DIRECTORY"
                    + " PROGRAM [ARGS...] (it is started by kolo run through an rsh agent)");
            System.exit(2);
        }
        System.exit(new RankAgent().run(args));
    }

    private int run(String[] args) {
        String addresses = args[0];
        String token = args[1];
        long deadline = System.nanoTime() + Duration.ofSeconds(Long.parseLong(args[2])).toNanos();
        String workingDirectory = args[3];
        List<String> program = Arrays.asList(args).subList(4, args.length);
        Socket socket;
        DataInputStream in;
        DataOutputStream out;
        String envLine;
        try {
            socket = connect(addresses, deadline);
            socket.setTcpNoDelay(true);
            socket.setSoTimeout((int) Duration.ofSeconds(10).toMillis());
            in = new DataInputStream(new BufferedInputStream(socket.getInputStream()));
            out = new DataOutputStream(new BufferedOutputStream(socket.getOutputStream()));
            byte[] rankNonce = AgentExchange.nonce();
            AgentExchange.writeClaim(out, token, rankNonce);
            byte[] launcherNonce = AgentExchange.readNonce(in);
            out.write(AgentExchange.proof(token, rankNonce, launcherNonce));
            out.flush();
            envLine = AgentExchange.readSealed(in, token, rankNonce, launcherNonce);
        } catch (IOException e) {
            System.err.println("kolo: rank agent on " + where + ": cannot get the rank's settings from the launcher"
                    + " at " + addresses + ": " + e.getMessage());
            return 1;
        }
        List<String> wrapper = new ArrayList<>(List.of("/bin/sh", "-c", RankWrapper.WRAPPER, "kolo-rank",
                workingDirectory));
        wrapper.addAll(program);
        Process rank;
        try {
            rank = new ProcessBuilder(wrapper).redirectOutput(ProcessBuilder.Redirect.INHERIT)
                    .redirectError(ProcessBuilder.Redirect.INHERIT).start();
            rankStdin = rank.getOutputStream();
            rankStdin.write(envLine.getBytes(StandardCharsets.UTF_8));
            rankStdin.flush();
        } catch (IOException e) {
            System.err.println("kolo: rank agent on " + where + ": cannot start the rank: " + e.getMessage());
            return 127;
        }
        Thread.ofPlatform().daemon().name("kolo-agent-listen").start(() -> listen(socket, in));
        Thread.ofPlatform().daemon().name("kolo-agent-beat").start(() -> beat(out));
        int code;
        while (true) {
            try {
                code = rank.waitFor();
                break;
            } catch (InterruptedException e) {
                // Only the rank's end ends this wait.
            }
        }
        try {
            synchronized (writing) {
                out.writeByte(AgentExchange.EXIT);
                out.writeInt(code);
                out.flush();
            }
            socket.close();
        } catch (IOException launcherGone) {
            // Nobody to tell.
        }
        return code;
    }

    /** Reads the launcher's beats; silence, a closed connection or a stop request stops the rank. */
    private void listen(Socket socket, DataInputStream in) {
        try {
            socket.setSoTimeout((int) AgentExchange.MISSED.toMillis());
            while (true) {
                int b = in.read();
                if (b == AgentExchange.STOP) {
                    stopRank(null);
                } else if (b < 0) {
                    stopRank("the launcher closed the connection (it ended or was killed)");
                    return;
                }
            }
        } catch (SocketTimeoutException e) {
            stopRank("no heartbeat from the launcher for " + AgentExchange.MISSED.toSeconds() + " s");
        } catch (IOException e) {
            stopRank("the connection to the launcher broke (" + e.getMessage() + ")");
        }
    }

    private void beat(DataOutputStream out) {
        try {
            while (true) {
                Thread.sleep(AgentExchange.BEAT_INTERVAL);
                synchronized (writing) {
                    out.writeByte(AgentExchange.BEAT);
                    out.flush();
                }
            }
        } catch (IOException | InterruptedException e) {
            // The listener hears of it too and stops the rank.
        }
    }

    /** Closing the wrapper's stdin makes it end the rank and its process group (TERM, grace, KILL). */
    private void stopRank(String lost) {
        if (stopping) {
            return;
        }
        stopping = true;
        if (lost != null) {
            System.err.println("kolo: rank agent on " + where + ": " + lost + "; stopping the rank");
        }
        try {
            rankStdin.close();
        } catch (IOException ignored) {
            // Closed already: the rank is on its way out.
        }
    }

    /** The first of {@code addresses} that answers, retried with backoff (the launcher may still be starting). */
    private static Socket connect(String addresses, long deadline) throws IOException {
        RetryDelay delay = new RetryDelay(Duration.ofMillis(250), Duration.ofSeconds(2));
        while (true) {
            List<String> failures = new ArrayList<>();
            for (String address : addresses.split(",")) {
                int colon = address.lastIndexOf(':');
                String host = address.substring(0, colon).replace("[", "").replace("]", "");
                int port = Integer.parseInt(address.substring(colon + 1));
                Socket s = new Socket();
                try {
                    s.connect(new InetSocketAddress(host, port), (int) CONNECT.toMillis());
                    return s;
                } catch (IOException e) {
                    s.close();
                    failures.add(address + ": " + e.getMessage());
                }
            }
            if (!delay.fitsBefore(deadline)) {
                throw new IOException(String.join("; ", failures));
            }
            try {
                delay.sleep(deadline);
            } catch (InterruptedException e) {
                throw new IOException("interrupted");
            }
        }
    }

    private static String hostName() {
        try {
            return Files.readString(Path.of("/proc/sys/kernel/hostname")).strip();
        } catch (IOException | RuntimeException e) {
            String env = System.getenv("HOSTNAME");
            return env != null ? env : "this host";
        }
    }
}
