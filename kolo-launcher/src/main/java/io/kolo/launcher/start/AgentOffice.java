package io.kolo.launcher.start;

import io.kolo.bootstrap.ConnectionGate;
import io.kolo.bootstrap.KoloSettings;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;

/**
 * The launcher's side of ranks started through an rsh agent ({@link AgentStart}): issues each rank a one-time token for
 * its environment, serves the {@link AgentExchange} to the rank agents that present one, and keeps a heartbeat with
 * each of them for as long as its rank runs. A rank whose heartbeat stops is lost: its agent process here is killed, so
 * that the launcher sees the rank end. A token presented a second time means someone else read it: the office reports
 * it through {@code misuse}, which ends the job.
 *
 * <p>Anyone who reaches the port can connect, so until a peer has proved it holds a token the office bounds what it
 * spends on it: at most {@link ConnectionGate#DEFAULT_MAX_UNAUTHENTICATED} connections in their handshake at once (a
 * new one pushes out the oldest: a real rank agent proves itself within a few round trips), one deadline for the whole
 * handshake, and no more read than a real claim's size.
 */
public final class AgentOffice implements AutoCloseable {
    // Between a rank's heartbeat stopping and its agent process here being killed: time for it to exit by itself.
    private static final Duration LOST_EXIT = Duration.ofSeconds(2);
    private static final Duration HANDSHAKE = Duration.ofSeconds(10);

    private final ServerSocket server;
    private final List<InetAddress> advertised;
    private final Duration validity;
    private final Consumer<String> misuse;
    private final Duration handshake;
    private final ConnectionGate gate;
    private final Map<String, Ticket> tickets = new ConcurrentHashMap<>();
    private final List<Socket> open = Collections.synchronizedList(new ArrayList<>());
    private volatile boolean closed;

    private AgentOffice(ServerSocket server, List<InetAddress> advertised, Duration validity,
                        Consumer<String> misuse, Duration handshake, int maxPending) {
        this.server = server;
        this.advertised = advertised;
        this.validity = validity;
        this.misuse = misuse;
        this.handshake = handshake;
        this.gate = new ConnectionGate("the launcher's agent office at port " + server.getLocalPort(), maxPending,
                System.getLogger(AgentOffice.class.getName()));
    }

    /**
     * Listens on {@code bind} (the rendezvous server's address, so that an address that reaches one reaches the
     * other); tokens are valid for {@code validity} after they are issued.
     */
    public static AgentOffice open(InetAddress bind, Duration validity, Consumer<String> misuse) throws IOException {
        return open(bind, validity, misuse, HANDSHAKE, ConnectionGate.DEFAULT_MAX_UNAUTHENTICATED);
    }

    /** As above, with the bounds on peers that have not proved themselves yet. */
    static AgentOffice open(InetAddress bind, Duration validity, Consumer<String> misuse, Duration handshake,
                            int maxPending) throws IOException {
        ServerSocket s = new ServerSocket();
        s.bind(new InetSocketAddress(bind, 0), 128);
        AgentOffice office = new AgentOffice(s, bind.isAnyLocalAddress() ? ownAddresses() : List.of(bind), validity,
                misuse, handshake, maxPending);
        Thread.ofPlatform().daemon().name("kolo-agent-office").start(office::serve);
        return office;
    }

    /** Where rank agents try to reach the office, in order: {@code ADDRESS:PORT,...}. */
    String addresses() {
        List<String> all = new ArrayList<>();
        for (InetAddress a : advertised) {
            String literal = a.getHostAddress();
            all.add((literal.contains(":") ? "[" + literal + "]" : literal) + ":" + server.getLocalPort());
        }
        return String.join(",", all);
    }

    /** A one-time token that hands {@code env} to the rank agent on {@code host} that presents it. */
    Ticket issue(String host, Map<String, String> env) {
        Ticket t = new Ticket(host, env, System.nanoTime() + validity.toNanos());
        tickets.put(AgentExchange.id(t.token), t);
        return t;
    }

    @Override
    public void close() {
        closed = true;
        try {
            server.close();
        } catch (IOException ignored) {
            // Closing anyway.
        }
        synchronized (open) {
            open.forEach(AgentOffice::closeQuietly);
        }
    }

    /** One rank's token and what became of it. */
    static final class Ticket {
        final String token = AgentExchange.newToken();
        final String host;
        private final Map<String, String> env;
        private final long expires;
        private volatile boolean claimed;
        private volatile String claimedFrom;
        private volatile Process process;
        private volatile String lost;
        private volatile boolean stopRequested;
        private volatile Integer reportedExit;
        private volatile DataOutputStream beats;

        private Ticket(String host, Map<String, String> env, long expires) {
            this.host = host;
            this.env = Map.copyOf(env);
            this.expires = expires;
        }

        /** Whether a rank agent has fetched the environment (the agent's command reached the host and ran). */
        boolean claimed() {
            return claimed;
        }

        /** Why the rank was lost (its heartbeat stopped), or null. */
        String lost() {
            return lost;
        }

        /** The process that started the rank here (the agent's client): killed if the rank is lost. */
        void attach(Process p) {
            process = p;
        }

        /** Asks the rank agent to stop its rank (TERM, its grace period, KILL) and exit with its code. */
        void requestStop() {
            stopRequested = true;
            DataOutputStream out = beats;
            if (out != null) {
                try {
                    synchronized (out) {
                        out.writeByte(AgentExchange.STOP);
                        out.flush();
                    }
                } catch (IOException gone) {
                    // The agent is gone already: its rank ended with it.
                }
            }
        }
    }

    private void serve() {
        while (!closed) {
            Socket s;
            try {
                s = server.accept();
            } catch (IOException e) {
                if (closed) {
                    return;
                }
                try {
                    gate.acceptFailed(e);
                } catch (InterruptedException stop) {
                    return;
                }
                continue;
            }
            open.add(s);
            gate.arrived(s);
            Thread.ofVirtual().name("kolo-agent-" + s.getRemoteSocketAddress()).start(() -> {
                try {
                    answer(s);
                } catch (IOException | RuntimeException e) {
                    // A stranger, a scanner or an agent that went away mid-exchange: nothing the job depends on.
                } finally {
                    gate.settled(s);
                    closeQuietly(s);
                    open.remove(s);
                }
            });
        }
    }

    private void answer(Socket s) throws IOException {
        s.setTcpNoDelay(true);
        HandshakeInput raw = new HandshakeInput(s, handshake);
        DataInputStream in = new DataInputStream(new BufferedInputStream(raw));
        DataOutputStream out = new DataOutputStream(new BufferedOutputStream(s.getOutputStream()));
        AgentExchange.Claim claim = AgentExchange.readClaim(in);
        String id = claim.id();
        byte[] rankNonce = claim.rankNonce();
        byte[] launcherNonce = AgentExchange.nonce();
        out.write(launcherNonce);
        out.flush();
        byte[] proof = in.readNBytes(32);
        Ticket t = tickets.get(id);
        if (t == null || !AgentExchange.proofMatches(t.token, rankNonce, launcherNonce, proof)) {
            AgentExchange.writeRefusal(out, "unknown token (not one of this job's ranks)");
            return;
        }
        String from = s.getInetAddress().getHostAddress();
        synchronized (t) {
            if (t.claimed) {
                AgentExchange.writeRefusal(out, "this rank's token was used already");
                misuse.accept("kolo: the one-time token of the rank on " + t.host + " was presented twice (from "
                        + t.claimedFrom + ", then from " + from + "): someone else may hold the job's settings and"
                        + " secret");
                return;
            }
            if (System.nanoTime() - t.expires > 0) {
                AgentExchange.writeRefusal(out, "the token expired: the rank asked for its settings later than the"
                        + " start timeout");
                return;
            }
            t.claimed = true;
            t.claimedFrom = from;
        }
        gate.settled(s);
        raw.lift((int) AgentExchange.MISSED.toMillis());
        Map<String, String> env = new LinkedHashMap<>(t.env);
        // The address this agent reached the launcher by reaches the rendezvous server too (the same bind address).
        env.computeIfPresent(KoloSettings.RENDEZVOUS_ADDR.name(), (k, v) -> s.getLocalAddress().getHostAddress());
        AgentExchange.writeSealed(out, t.token, rankNonce, launcherNonce, RankWrapper.environmentLine(env));
        heartbeat(s, in, out, t);
    }

    /** Beats both ways until the rank ends, the launcher stops it, or the agent goes silent. */
    private void heartbeat(Socket s, DataInputStream in, DataOutputStream out, Ticket t) throws IOException {
        t.beats = out;
        if (t.stopRequested) {
            t.requestStop();
        }
        Thread beating = Thread.ofVirtual().start(() -> {
            try {
                while (!s.isClosed()) {
                    Thread.sleep(AgentExchange.BEAT_INTERVAL);
                    synchronized (out) {
                        out.writeByte(AgentExchange.BEAT);
                        out.flush();
                    }
                }
            } catch (IOException | InterruptedException e) {
                // The connection is gone: the reader below says what that means.
            }
        });
        try {
            while (true) {
                int b = in.read();
                if (b == AgentExchange.EXIT) {
                    t.reportedExit = in.readInt();
                } else if (b < 0) {
                    if (t.reportedExit == null) {
                        lose(t, "its agent's connection to the launcher closed before the rank ended");
                    }
                    return;
                }
            }
        } catch (SocketTimeoutException e) {
            lose(t, "no heartbeat from its agent for " + AgentExchange.MISSED.toSeconds() + " s");
        } catch (EOFException | SocketException e) {
            if (t.reportedExit == null) {
                lose(t, "its agent's connection to the launcher broke (" + e.getMessage() + ")");
            }
        } finally {
            beating.interrupt();
        }
    }

    /** The rank is gone from the launcher's view: its agent process here ends too, so the launcher sees it end. */
    private void lose(Ticket t, String why) {
        if (closed || t.stopRequested) {
            return;
        }
        t.lost = why;
        Process p = t.process;
        if (p == null) {
            return;
        }
        try {
            if (!p.waitFor(LOST_EXIT.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS)) {
                p.descendants().forEach(ProcessHandle::destroyForcibly);
                p.destroyForcibly();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** This machine's addresses other hosts may reach it by: IPv4 first, no loopback, no link-local. */
    private static List<InetAddress> ownAddresses() throws SocketException {
        List<InetAddress> v4 = new ArrayList<>();
        List<InetAddress> v6 = new ArrayList<>();
        for (NetworkInterface nic : Collections.list(NetworkInterface.getNetworkInterfaces())) {
            if (!nic.isUp() || nic.isLoopback()) {
                continue;
            }
            for (InetAddress a : Collections.list(nic.getInetAddresses())) {
                if (!a.isLoopbackAddress() && !a.isLinkLocalAddress()) {
                    (a instanceof Inet4Address ? v4 : v6).add(a);
                }
            }
        }
        v4.addAll(v6);
        if (v4.isEmpty()) {
            v4.add(InetAddress.getLoopbackAddress());
        }
        return v4;
    }

    private static void closeQuietly(Socket s) {
        try {
            s.close();
        } catch (IOException ignored) {
            // Closing anyway.
        }
    }
}
