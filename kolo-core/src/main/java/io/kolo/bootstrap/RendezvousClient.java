package io.kolo.bootstrap;

import io.kolo.KoloException;
import io.kolo.KoloTimeoutException;
import io.kolo.launch.JobSecret;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * A rank's connection to the {@link RendezvousServer}. Requests from several threads are serialised on the
 * one connection, so a thread blocked in {@link #get} holds up the others until its key appears or it
 * times out; ranks only block on keys they need before doing anything else, so this is fine.
 */
public final class RendezvousClient implements KeyValueStore {
    private static final Duration FIRST_BACKOFF = Duration.ofMillis(20);
    private static final Duration MAX_BACKOFF = Duration.ofSeconds(1);
    // Slack on top of a GET's own timeout before we decide the server is hung rather than waiting for us.
    private static final Duration REPLY_GRACE = Duration.ofSeconds(30);

    private final InetSocketAddress server;
    private final Socket socket;
    private final DataInputStream in;
    private final DataOutputStream out;
    private boolean closed;

    private RendezvousClient(InetSocketAddress server, Socket socket) throws IOException {
        this.server = server;
        this.socket = socket;
        this.in = new DataInputStream(new BufferedInputStream(socket.getInputStream()));
        this.out = new DataOutputStream(new BufferedOutputStream(socket.getOutputStream()));
    }

    /**
     * Connects and authenticates, retrying with backoff until {@code connectTimeout} has passed whatever says "not now"
     * rather than "not you": a refused or timed-out connection (ranks routinely start before the launcher's, or rank
     * 0's, server is listening), and a handshake the server dropped, reset or did not finish in time (a server busy
     * with thousands of ranks connecting at once drops the oldest handshakes to make room).
     *
     * @throws KoloTimeoutException when no attempt succeeded within {@code connectTimeout}, naming what was tried
     * @throws KoloException        when the server is there but refused this rank (wrong secret) or is not Kolo's
     */
    public static RendezvousClient connect(InetSocketAddress server, JobSecret secret, Duration connectTimeout) {
        return connect(server, secret, connectTimeout, false);
    }

    /**
     * As {@link #connect}, but a server that refuses the handshake is retried too until {@code connectTimeout}: on
     * rejoining a job whose rank 0 serves the store at a fixed port, the last job's store, still closing, refuses the
     * new job's secret while the new one is not yet listening.
     */
    static RendezvousClient connectRetryingRefusals(InetSocketAddress server, JobSecret secret,
                                                    Duration connectTimeout) {
        return connect(server, secret, connectTimeout, true);
    }

    private static RendezvousClient connect(InetSocketAddress server, JobSecret secret, Duration connectTimeout,
                                            boolean retryRefusals) {
        long start = System.nanoTime();
        long deadline = start + connectTimeout.toNanos();
        RetryDelay delay = new RetryDelay(FIRST_BACKOFF, MAX_BACKOFF);
        Attempts attempts = new Attempts();
        while (true) {
            long leftMs = Math.max(1, (deadline - System.nanoTime()) / 1_000_000);
            Socket socket = new Socket();
            boolean connected = false;
            try {
                socket.connect(server, (int) Math.min(Integer.MAX_VALUE, leftMs));
                connected = true;
                socket.setTcpNoDelay(true);
                Handshake.client(socket, secret, RendezvousProtocol.PURPOSE, "",
                        Duration.ofMillis(Math.min(RendezvousServer.HANDSHAKE_TIMEOUT.toMillis(), leftMs)));
                socket.setSoTimeout(0);
                return new RendezvousClient(server, socket);
            } catch (Handshake.Rejected e) {
                closeQuietly(socket);
                attempts.failed(true, e);
                if (!e.hungUpFirst() && !retryRefusals) {
                    throw refused(server, e);
                }
            } catch (IOException e) {
                // Refused, reset, timed out, dropped: the server is not there yet, or too busy for this attempt.
                closeQuietly(socket);
                attempts.failed(connected, e);
                if (!connected && !connectMaySucceedLater(e)) {
                    throw new KoloException("cannot connect to the rendezvous server at " + hostPort(server) + ": "
                            + e.getMessage(), e);
                }
            }
            if (!delay.fitsBefore(deadline)) {
                KoloTimeoutException t = new KoloTimeoutException("could not reach the rendezvous server at "
                        + hostPort(server) + " within " + Durations.describe(connectTimeout) + ": " + attempts
                        + "; is the launcher (or rank 0) running and reachable there (KOLO_RENDEZVOUS_ADDR, "
                        + "KOLO_RENDEZVOUS_PORT)? A slow start of a large job needs a longer KOLO_START_TIMEOUT_SECONDS"
                        + (attempts.onlyHangUps() ? "; a program that is not Kolo's may listen on port " + server.getPort() : ""));
                t.initCause(attempts.last);
                throw t;
            }
            sleep(delay, deadline);
        }
    }

    /**
     * Whether a connect that failed before the handshake began may succeed when tried again: refused, timed out,
     * unreachable for now, or reset (a store closing at this port, a job that just ended with the next one's store about
     * to listen there, resets the connects in its backlog, sometimes before connect() has returned). What waiting
     * cannot change, a host name that does not resolve, fails at once.
     */
    static boolean connectMaySucceedLater(IOException e) {
        return e instanceof SocketException || e instanceof SocketTimeoutException;
    }

    private static KoloException refused(InetSocketAddress server, Handshake.Rejected e) {
        return new KoloException("the rendezvous server at " + hostPort(server)
                + " did not accept this rank: " + e.getMessage()
                + (e.notKolo() ? " (maybe another program listens on port " + server.getPort() + ": KOLO_RENDEZVOUS_ADDR and"
                + " KOLO_RENDEZVOUS_PORT must name this job's launcher, or its rank 0)"
                : " (KOLO_SECRET must be the one the launcher generated for this job)"), e);
    }

    /** What the attempts to connect met, for the one line that says why none succeeded. */
    private static final class Attempts {
        private int refused;
        private int droppedInHandshake;
        private int timedOutInHandshake;
        private int refusedHandshake;
        private IOException last;

        void failed(boolean connected, IOException e) {
            last = e;
            if (!connected) {
                refused++;
            } else if (e instanceof SocketTimeoutException) {
                timedOutInHandshake++;
            } else if (e instanceof Handshake.Rejected r && !r.hungUpFirst()) {
                refusedHandshake++;
            } else {
                droppedInHandshake++;
            }
        }

        /** Every attempt connected and was closed before the handshake began: maybe not Kolo's server at all. */
        boolean onlyHangUps() {
            return droppedInHandshake > 0 && refused + timedOutInHandshake + refusedHandshake == 0;
        }

        @Override
        public String toString() {
            List<String> kinds = new ArrayList<>();
            count(kinds, refused, "not connected");
            count(kinds, droppedInHandshake, "dropped in the handshake");
            count(kinds, timedOutInHandshake, "with a handshake that did not finish in time");
            count(kinds, refusedHandshake, "refused in the handshake");
            int all = refused + droppedInHandshake + timedOutInHandshake + refusedHandshake;
            return all + (all == 1 ? " attempt" : " attempts") + " (" + String.join(", ", kinds) + "), the last: "
                    + (last == null ? "?" : last.getMessage());
        }

        private static void count(List<String> kinds, int n, String what) {
            if (n > 0) {
                kinds.add(n + " " + what);
            }
        }
    }

    @Override
    public synchronized void put(String key, String value) {
        try {
            sendKeyValue(RendezvousProtocol.PUT, key, value);
            expect(in.readByte(), RendezvousProtocol.OK);
        } catch (IOException e) {
            throw gone(e);
        }
    }

    @Override
    public synchronized boolean putIfAbsent(String key, String value) {
        try {
            sendKeyValue(RendezvousProtocol.PUT_IF_ABSENT, key, value);
            byte reply = in.readByte();
            if (reply != RendezvousProtocol.STORED && reply != RendezvousProtocol.PRESENT) {
                throw new IOException("unexpected reply " + reply);
            }
            return reply == RendezvousProtocol.STORED;
        } catch (IOException e) {
            throw gone(e);
        }
    }

    @Override
    public synchronized Optional<String> tryGet(String key) {
        try {
            setReplyTimeout(Duration.ZERO);
            out.writeByte(RendezvousProtocol.TRY_GET);
            RendezvousProtocol.writeString(out, key);
            out.flush();
            return readResult();
        } catch (IOException e) {
            throw gone(e);
        }
    }

    @Override
    public synchronized String get(String key, Duration timeout) {
        Optional<String> value;
        try {
            setReplyTimeout(timeout);
            out.writeByte(RendezvousProtocol.GET);
            RendezvousProtocol.writeString(out, key);
            out.writeLong(Math.max(0, timeout.toMillis()));
            out.flush();
            value = readResult();
        } catch (IOException e) {
            throw gone(e);
        }
        return value.orElseThrow(() -> new KoloTimeoutException("timed out after "
                + Durations.describe(timeout) + " waiting for key '" + key
                + "' in the rendezvous store at " + hostPort(server)));
    }

    /** One round trip, whatever {@code count} is. */
    @Override
    public synchronized List<String> getEach(String prefix, int count, Duration timeout) {
        if (count > RendezvousProtocol.MAX_EACH) {
            throw new IllegalArgumentException("at most " + RendezvousProtocol.MAX_EACH + " keys at once, asked for " + count);
        }
        int missing;
        try {
            setReplyTimeout(timeout);
            out.writeByte(RendezvousProtocol.GET_EACH);
            RendezvousProtocol.writeString(out, prefix);
            out.writeInt(count);
            out.writeLong(Math.max(0, timeout.toMillis()));
            out.flush();
            byte reply = in.readByte();
            if (reply == RendezvousProtocol.PRESENT) {
                List<String> values = new ArrayList<>(count);
                for (int i = 0; i < count; i++) {
                    values.add(RendezvousProtocol.readString(in));
                }
                return values;
            }
            expect(reply, RendezvousProtocol.ABSENT);
            missing = in.readInt();
        } catch (IOException e) {
            throw gone(e);
        }
        throw new KoloTimeoutException("timed out after " + Durations.describe(timeout) + " waiting for key '" + prefix
                + missing + "' in the rendezvous store at " + hostPort(server));
    }

    /** Sends a request that carries a key and a value (PUT, PUT_IF_ABSENT); the caller reads the reply. */
    private void sendKeyValue(byte op, String key, String value) throws IOException {
        setReplyTimeout(Duration.ZERO);
        out.writeByte(op);
        RendezvousProtocol.writeString(out, key);
        RendezvousProtocol.writeString(out, value);
        out.flush();
    }

    private Optional<String> readResult() throws IOException {
        byte reply = in.readByte();
        if (reply == RendezvousProtocol.PRESENT) {
            return Optional.of(RendezvousProtocol.readString(in));
        }
        expect(reply, RendezvousProtocol.ABSENT);
        return Optional.empty();
    }

    private void setReplyTimeout(Duration wait) throws IOException {
        if (closed) {
            throw new KoloException("the rendezvous client for " + hostPort(server) + " is closed");
        }
        long ms = wait.plus(REPLY_GRACE).toMillis();
        socket.setSoTimeout((int) Math.min(Integer.MAX_VALUE, Math.max(1, ms)));
    }

    private static void expect(byte reply, byte wanted) throws IOException {
        if (reply != wanted) {
            throw new IOException("unexpected reply " + reply);
        }
    }

    private KoloException gone(IOException e) {
        closeQuietly(socket);
        closed = true;
        return new KoloException("the rendezvous server at " + hostPort(server) + " is gone ("
                + e.getMessage() + "); the launcher (or rank 0) has probably exited", e);
    }

    /** The server this client talks to. */
    public InetSocketAddress server() {
        return server;
    }

    @Override
    public synchronized void close() {
        closed = true;
        closeQuietly(socket);
    }

    private static String hostPort(InetSocketAddress a) {
        return (a.getAddress() != null ? a.getAddress().getHostAddress() : a.getHostString()) + ":" + a.getPort();
    }

    private static void sleep(RetryDelay delay, long deadline) {
        try {
            delay.sleep(deadline);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new KoloException("interrupted while connecting to the rendezvous server", e);
        }
    }

    private static void closeQuietly(Socket s) {
        try {
            s.close();
        } catch (IOException ignored) {
            // Already failing or closing; the original error is what matters.
        }
    }

    @Override
    public String toString() {
        return "RendezvousClient[" + hostPort(server) + "]";
    }
}
