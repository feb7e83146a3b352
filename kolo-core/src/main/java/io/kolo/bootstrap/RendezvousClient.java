package io.kolo.bootstrap;

import io.kolo.KoloException;
import io.kolo.KoloTimeoutException;
import io.kolo.launch.JobSecret;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.Socket;
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
     * Connects and authenticates, retrying refused connections with backoff until {@code connectTimeout}
     * has passed, because ranks routinely start before the launcher's (or rank 0's) server is listening.
     *
     * @throws KoloTimeoutException when no server accepted within {@code connectTimeout}
     * @throws KoloException        when the server is there but the handshake failed (wrong secret)
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
        long deadline = System.nanoTime() + connectTimeout.toNanos();
        RetryDelay delay = new RetryDelay(FIRST_BACKOFF, MAX_BACKOFF);
        IOException last = null;
        while (true) {
            long leftMs = Math.max(1, (deadline - System.nanoTime()) / 1_000_000);
            Socket socket = new Socket();
            try {
                socket.connect(server, (int) Math.min(Integer.MAX_VALUE, leftMs));
            } catch (ConnectException | SocketTimeoutException e) {
                closeQuietly(socket);
                last = e;
                if (!delay.fitsBefore(deadline)) {
                    KoloTimeoutException t = new KoloTimeoutException("could not reach the rendezvous server at "
                            + hostPort(server) + " within " + Durations.describe(connectTimeout)
                            + " (" + last.getMessage() + "); is the launcher (or rank 0) running?");
                    t.initCause(last);
                    throw t;
                }
                sleep(delay, deadline);
                continue;
            } catch (IOException e) {
                closeQuietly(socket);
                throw new KoloException("cannot connect to the rendezvous server at " + hostPort(server) + ": "
                        + e.getMessage(), e);
            }
            try {
                socket.setTcpNoDelay(true);
                Handshake.client(socket, secret, RendezvousProtocol.PURPOSE, "", RendezvousServer.HANDSHAKE_TIMEOUT);
                socket.setSoTimeout(0);
                return new RendezvousClient(server, socket);
            } catch (IOException e) {
                closeQuietly(socket);
                if (retryRefusals && delay.fitsBefore(deadline)) {
                    sleep(delay, deadline);
                    continue;
                }
                // A stranger (or a silent peer) never checked this end's proof: the secret is not what is wrong.
                boolean stranger = e instanceof Handshake.Rejected r ? r.notKolo() : e instanceof SocketTimeoutException;
                throw new KoloException("the rendezvous server at " + hostPort(server)
                        + " did not accept this rank: " + e.getMessage()
                        + (stranger ? " (maybe another program listens on port " + server.getPort() + ": KOLO_RENDEZVOUS_ADDR and"
                        + " KOLO_RENDEZVOUS_PORT must name this job's launcher, or its rank 0)"
                        : " (KOLO_SECRET must be the one the launcher generated for this job)"), e);
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
