package io.kolo.bootstrap;

import io.kolo.KoloException;
import io.kolo.KoloTimeoutException;
import io.kolo.launch.JobSecret;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * The job's rendezvous store served over TCP, run by the launcher (or by rank 0 when there is none). Every
 * connection must pass the {@link Handshake} before any request is read, so a stranger on the network can
 * neither read addresses nor plant them. The server is also a {@link KeyValueStore} for the process that
 * hosts it, which is how the launcher records why a rank died.
 */
public final class RendezvousServer implements KeyValueStore {
    private static final System.Logger LOG = LazyLogger.of(RendezvousServer.class);

    static {
        // A server whose process has run out of descriptors (strangers at its port) must still answer its ranks, and
        // by then even loading a class fails: the protocol's class comes with the server's, not with the first request.
        RendezvousProtocol.load();
    }

    // Long enough for a loaded machine, short enough that a silent stranger does not pin a thread.
    static final Duration HANDSHAKE_TIMEOUT = Duration.ofSeconds(10);

    private final ServerSocket serverSocket;
    private final JobSecret secret;
    /** The store itself; this class only serves it over authenticated connections. */
    private final InMemoryStore values = new InMemoryStore();
    private final Set<Socket> connections = ConcurrentHashMap.newKeySet();
    private final InetSocketAddress address;
    private final ConnectionGate gate;
    /** What the job's ranks asked of the store, for {@code kolo bench scale}: how start-up load grows with the job. */
    private final LongAdder requests = new LongAdder();
    private final LongAdder bytesReceived = new LongAdder();
    private final LongAdder bytesSent = new LongAdder();
    private volatile boolean closed;
    private volatile Thread acceptor;
    // Enough for the acceptor, signalled out of accept(), to let go of the listening socket.
    private static final java.time.Duration ACCEPTOR_EXIT = java.time.Duration.ofSeconds(5);

    private RendezvousServer(ServerSocket serverSocket, JobSecret secret) {
        this.serverSocket = serverSocket;
        this.secret = secret;
        this.address = new InetSocketAddress(serverSocket.getInetAddress(), serverSocket.getLocalPort());
        this.gate = new ConnectionGate("the rendezvous server at " + hostPort(), ConnectionGate.DEFAULT_MAX_UNAUTHENTICATED,
                LOG);
    }

    /**
     * Binds to {@code bind} only (never the wildcard unless asked for) and starts accepting.
     *
     * @param port 0 for an ephemeral port; see {@link #address()}
     */
    public static RendezvousServer start(InetAddress bind, int port, JobSecret secret) {
        try {
            ServerSocket socket = new ServerSocket();
            socket.setReuseAddress(true);
            socket.bind(new InetSocketAddress(bind, port), 128);
            RendezvousServer server = new RendezvousServer(socket, secret);
            server.acceptor = Thread.ofPlatform().daemon().name("kolo-rendezvous-accept-" + socket.getLocalPort())
                    .start(server::acceptLoop);
            return server;
        } catch (IOException e) {
            throw new KoloException("cannot start the rendezvous server on " + bind.getHostAddress() + ":" + port
                    + ": " + e.getMessage(), e);
        }
    }

    /** The address clients connect to. */
    public InetSocketAddress address() {
        return address;
    }

    private void acceptLoop() {
        while (!closed) {
            Socket socket;
            try {
                socket = serverSocket.accept();
            } catch (IOException | RuntimeException e) {
                if (closed) {
                    return;
                }
                try {
                    gate.acceptFailed(e);
                } catch (InterruptedException interrupted) {
                    return;
                }
                continue;
            }
            connections.add(socket);
            if (closed) {
                closeQuietly(socket);
                return;
            }
            gate.arrived(socket);
            // A platform thread, not a virtual one: the first virtual thread that blocks on a socket starts the JDK's
            // poller, which then waits in native code for the JVM's life, and JVM exit waits a while for threads in
            // native code, on every launcher exit (docs/performance.md, "First run").
            try {
                ThreadLimit.start(Thread.ofPlatform().daemon().name("kolo-rendezvous-" + socket.getRemoteSocketAddress()),
                        () -> serve(socket), "the rendezvous server's connection");
            } catch (KoloException e) {
                LOG.log(System.Logger.Level.ERROR, e.getMessage());
                connections.remove(socket);
                gate.settled(socket);
                closeQuietly(socket);
            }
        }
    }

    private void serve(Socket socket) {
        try (socket) {
            socket.setTcpNoDelay(true);
            try {
                Handshake.server(socket, secret, RendezvousProtocol.PURPOSE, HANDSHAKE_TIMEOUT, Handshake.ClaimCheck.ANY);
            } catch (IOException e) {
                if (!closed) {
                    gate.rejected(socket.getRemoteSocketAddress(), e.getMessage());
                }
                return;
            } finally {
                gate.settled(socket);
            }
            // A GET legitimately waits as long as its caller asked, so requests have no read timeout.
            socket.setSoTimeout(0);
            DataInputStream in = new DataInputStream(new BufferedInputStream(new CountedInput(socket.getInputStream())));
            DataOutputStream out = new DataOutputStream(new BufferedOutputStream(socket.getOutputStream()));
            while (!closed) {
                int op = in.read();
                if (op < 0) {
                    return;
                }
                int sentBefore = out.size();
                handle((byte) op, in, out);
                // Counted before the answer leaves, so that a client that has its answer sees its request counted.
                requests.increment();
                bytesSent.add(out.size() - sentBefore);
                out.flush();
            }
        } catch (EOFException | SocketException e) {
            // The client went away (a rank finished or died); that is its business, not ours.
        } catch (IOException e) {
            if (!closed) {
                LOG.log(System.Logger.Level.WARNING, "dropping rendezvous connection from "
                        + socket.getRemoteSocketAddress() + ": " + e.getMessage());
            }
        } finally {
            connections.remove(socket);
        }
    }

    /** Requests served since start (every PUT, PUT_IF_ABSENT, TRY_GET, GET and GET_EACH, after the handshakes). */
    public long requests() {
        return requests.sum();
    }

    /** Request and reply bytes since start, handshakes left out. */
    public long requestBytes() {
        return bytesReceived.sum() + bytesSent.sum();
    }

    /** Connections in their handshake now (for tests of the limits strangers meet). */
    int unauthenticated() {
        return gate.unauthenticated();
    }

    private void handle(byte op, DataInputStream in, DataOutputStream out) throws IOException {
        switch (op) {
            case RendezvousProtocol.PUT -> {
                put(RendezvousProtocol.readString(in), RendezvousProtocol.readString(in));
                out.writeByte(RendezvousProtocol.OK);
            }
            case RendezvousProtocol.PUT_IF_ABSENT -> {
                boolean stored = putIfAbsent(RendezvousProtocol.readString(in), RendezvousProtocol.readString(in));
                out.writeByte(stored ? RendezvousProtocol.STORED : RendezvousProtocol.PRESENT);
            }
            case RendezvousProtocol.TRY_GET -> writeResult(out, tryGet(RendezvousProtocol.readString(in)));
            case RendezvousProtocol.GET -> {
                String key = RendezvousProtocol.readString(in);
                long timeoutMs = in.readLong();
                writeResult(out, await(key, Math.max(0, timeoutMs)));
            }
            case RendezvousProtocol.GET_EACH -> {
                String prefix = RendezvousProtocol.readString(in);
                int count = in.readInt();
                long timeoutMs = in.readLong();
                if (count < 0 || count > RendezvousProtocol.MAX_EACH) {
                    throw new IOException("bad key count " + count + " in rendezvous request");
                }
                writeEach(out, prefix, count, Math.max(0, timeoutMs));
            }
            default -> throw new IOException("unknown rendezvous request " + op);
        }
    }

    private static void writeResult(DataOutputStream out, Optional<String> value) throws IOException {
        if (value.isPresent()) {
            out.writeByte(RendezvousProtocol.PRESENT);
            RendezvousProtocol.writeString(out, value.get());
        } else {
            out.writeByte(RendezvousProtocol.ABSENT);
        }
    }

    private void writeEach(DataOutputStream out, String prefix, int count, long timeoutMs) throws IOException {
        List<String> found;
        try {
            found = values.getEach(prefix, count, Duration.ofMillis(timeoutMs));
        } catch (KoloTimeoutException | IllegalStateException timedOutOrClosed) {
            out.writeByte(RendezvousProtocol.ABSENT);
            out.writeInt(firstMissing(prefix, count));
            return;
        }
        out.writeByte(RendezvousProtocol.PRESENT);
        for (String v : found) {
            RendezvousProtocol.writeString(out, v);
        }
    }

    private int firstMissing(String prefix, int count) {
        for (int i = 0; i < count; i++) {
            if (values.tryGet(prefix + i).isEmpty()) {
                return i;
            }
        }
        return count;
    }

    /** The value once present, or empty when the wait ran out or the server is closing. */
    private Optional<String> await(String key, long timeoutMs) {
        try {
            return Optional.of(values.get(key, Duration.ofMillis(timeoutMs)));
        } catch (KoloTimeoutException | IllegalStateException timedOutOrClosed) {
            return Optional.empty();
        }
    }

    @Override
    public void put(String key, String value) {
        values.put(key, value);
    }

    @Override
    public boolean putIfAbsent(String key, String value) {
        return values.putIfAbsent(key, value);
    }

    @Override
    public List<String> getEach(String prefix, int count, Duration timeout) {
        try {
            return values.getEach(prefix, count, timeout);
        } catch (IllegalStateException closing) {
            throw new KoloException("the rendezvous server at " + hostPort() + " was closed while waiting for key '"
                    + prefix + firstMissing(prefix, count) + "'", closing);
        }
    }

    @Override
    public Optional<String> tryGet(String key) {
        return values.tryGet(key);
    }

    @Override
    public String get(String key, Duration timeout) {
        return await(key, timeout.toMillis()).orElseThrow(() -> closed
                ? new KoloException("the rendezvous server at " + hostPort() + " was closed while waiting for key '" + key + "'")
                : new KoloTimeoutException("timed out after " + Durations.describe(timeout)
                + " waiting for key '" + key + "' in the rendezvous store at " + hostPort()));
    }

    private String hostPort() {
        return address.getAddress().getHostAddress() + ":" + address.getPort();
    }

    /** Stops accepting, drops every connection and releases waiting GETs. Idempotent. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        closeQuietly(serverSocket);
        // A thread blocked in accept() keeps the socket listening until it has been woken: wait for it, so that once
        // close returns nothing listens on the port any more.
        Thread t = acceptor;
        if (t != null && t != Thread.currentThread()) {
            try {
                t.join(ACCEPTOR_EXIT);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        for (Socket s : connections) {
            closeQuietly(s);
        }
        values.close();
    }

    /** Counts what a connection's requests read off the socket, once its handshake is done. */
    private final class CountedInput extends java.io.FilterInputStream {
        CountedInput(java.io.InputStream in) {
            super(in);
        }

        @Override
        public int read() throws IOException {
            int b = super.read();
            if (b >= 0) {
                bytesReceived.increment();
            }
            return b;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            int n = super.read(b, off, len);
            if (n > 0) {
                bytesReceived.add(n);
            }
            return n;
        }
    }

    private static void closeQuietly(AutoCloseable c) {
        try {
            c.close();
        } catch (Exception ignored) {
            // Closing on shutdown; there is nobody left to tell.
        }
    }

    @Override
    public String toString() {
        return "RendezvousServer[" + hostPort() + "]";
    }
}
