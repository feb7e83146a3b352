package io.kolo.bootstrap;

import io.kolo.KoloException;
import io.kolo.KoloTimeoutException;
import io.kolo.launch.JobSecret;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * The job's rendezvous store served over TCP, run by the launcher (or by rank 0 when there is none). Every
 * connection must pass the {@link Handshake} before any request is read, so a stranger on the network can
 * neither read addresses nor plant them. The server is also a {@link KeyValueStore} for the process that
 * hosts it, which is how the launcher records why a rank died.
 *
 * <p>One thread serves every connection, whatever the job's size: it reads whole requests without blocking, answers
 * those it can at once, and parks a GET or GET_EACH whose keys are missing in the store's waiters until the keys come
 * or its own timeout passes. A connection that has not authenticated holds at most a handshake's bytes, for at most
 * {@link Limits#handshakeTimeout()}, and at most {@link Limits#maxHandshakes()} of them are held at once.
 *
 * <p>This class runs that thread: it accepts, expires handshakes and sleeps in select until the next deadline. Each
 * connection's protocol is a {@code StoreConnection}, the requests waiting for keys are {@code ParkedRequests}.
 */
public final class RendezvousServer implements KeyValueStore {
    private static final System.Logger LOG = LazyLogger.of(RendezvousServer.class);

    static {
        // A server whose process has run out of descriptors (strangers at its port) must still answer its ranks, and
        // by then even loading a class fails: every class the serving thread needs comes with the server's, not with
        // the first connection or request that needs it.
        RendezvousProtocol.load();
        for (Class<?> c : List.of(RendezvousServer.class, StoreConnection.class, ParkedRequests.class,
                EncodedTables.class, RequestCounts.class, RendezvousProtocol.class, Handshake.class, InMemoryStore.class)) {
            c.getDeclaredClasses();
        }
    }

    // Long enough for a loaded machine, short enough that a silent stranger does not hold a descriptor long.
    static final Duration HANDSHAKE_TIMEOUT = Duration.ofSeconds(10);
    /**
     * Every rank of a 1,024-rank job connecting at once finds room; a pending handshake costs the server a descriptor
     * and a few hundred bytes, so strangers beyond it push the oldest out rather than grow the server.
     */
    static final int MAX_HANDSHAKES = 1024;
    // Enough for the serving thread, woken out of select(), to let go of the listening socket.
    private static final Duration SERVER_EXIT = Duration.ofSeconds(5);
    private static final int BACKLOG = 1024;

    /** What a connection that has not authenticated yet may make the server hold, and for how long. */
    record Limits(int maxHandshakes, Duration handshakeTimeout) {
        static final Limits DEFAULT = new Limits(MAX_HANDSHAKES, HANDSHAKE_TIMEOUT);
    }

    private final ServerSocketChannel listener;
    private final Selector selector;
    private final SelectionKey acceptKey;
    private final JobSecret secret;
    private final Limits limits;
    /** The store itself; this class only serves it over authenticated connections. */
    private final InMemoryStore values = new InMemoryStore();
    private final InetSocketAddress address;
    private final ConnectionGate gate;
    private final RateLimitedLog troubles = new RateLimitedLog(LOG);
    private final RequestCounts counts = new RequestCounts();
    private volatile boolean closed;
    private final Thread thread;

    // Owned by the serving thread.
    private final ParkedRequests parkedRequests;
    /** What every connection shares, the connection's own state aside. */
    private final StoreConnection.Shared shared;
    /** Connections in their handshake, oldest first (all have the same deadline, so the oldest expires first). */
    private final LinkedHashSet<StoreConnection> handshaking = new LinkedHashSet<>();
    private final Set<StoreConnection> connections = new HashSet<>();
    /** When accepting resumes after it failed ({@link #now()} terms); 0 while it is not paused. */
    private long acceptResumesAt;
    /** Deadlines are kept as nanoseconds since this, so that they compare plainly (a wait may be "forever"). */
    private final long origin = System.nanoTime();

    private RendezvousServer(ServerSocketChannel listener, Selector selector, JobSecret secret, Limits limits)
            throws IOException {
        this.listener = listener;
        this.selector = selector;
        this.secret = secret;
        this.limits = limits;
        InetSocketAddress bound = (InetSocketAddress) listener.getLocalAddress();
        this.address = bound;
        this.gate = new ConnectionGate("the rendezvous server at " + hostPort(), limits.maxHandshakes(), LOG);
        this.acceptKey = listener.register(selector, SelectionKey.OP_ACCEPT);
        this.parkedRequests = new ParkedRequests(this::now, selector::wakeup);
        this.shared = new StoreConnection.Shared(this, gate, values, parkedRequests, new EncodedTables(), counts,
                troubles);
        // A platform thread, not a virtual one: the first virtual thread that blocks on a socket starts the JDK's
        // poller, which then waits in native code for the JVM's life, and JVM exit waits a while for threads in
        // native code, on every launcher exit (docs/performance.md, "First run").
        this.thread = Thread.ofPlatform().daemon().name("kolo-rendezvous-" + bound.getPort()).unstarted(this::serve);
    }

    /**
     * Binds to {@code bind} only (never the wildcard unless asked for) and starts serving.
     *
     * @param port 0 for an ephemeral port; see {@link #address()}
     */
    public static RendezvousServer start(InetAddress bind, int port, JobSecret secret) {
        return start(bind, port, secret, Limits.DEFAULT);
    }

    static RendezvousServer start(InetAddress bind, int port, JobSecret secret, Limits limits) {
        ServerSocketChannel listener = null;
        Selector selector = null;
        try {
            listener = ServerSocketChannel.open();
            listener.setOption(StandardSocketOptions.SO_REUSEADDR, true);
            listener.bind(new InetSocketAddress(bind, port), BACKLOG);
            listener.configureBlocking(false);
            selector = Selector.open();
            RendezvousServer server = new RendezvousServer(listener, selector, secret, limits);
            server.thread.start();
            return server;
        } catch (IOException e) {
            closeQuietly(selector);
            closeQuietly(listener);
            throw new KoloException("cannot start the rendezvous server on " + bind.getHostAddress() + ":" + port
                    + ": " + e.getMessage(), e);
        }
    }

    /** The address clients connect to. */
    public InetSocketAddress address() {
        return address;
    }

    private void serve() {
        try {
            while (!closed && selector.isOpen()) {
                try {
                    serveOnce();
                } catch (IOException | RuntimeException | Error e) {
                    // The one thread every rank depends on: what fails here fails once, and the others are served on.
                    if (!closed) {
                        troubles.warn("the rendezvous server at " + hostPort() + " hit " + e + "; serving on");
                        pauseAfterTrouble();
                    }
                }
            }
        } finally {
            for (StoreConnection c : new ArrayList<>(connections)) {
                c.close(false);
            }
            closeQuietly(listener);
            closeQuietly(selector);
        }
    }

    private void serveOnce() throws IOException {
        selector.select(this::ready, selectTimeoutMillis());
        parkedRequests.retryWoken();
        long now = now();
        expireHandshakes(now);
        parkedRequests.expire(now);
        if (acceptResumesAt != 0 && now >= acceptResumesAt && acceptKey.isValid()) {
            acceptResumesAt = 0;
            acceptKey.interestOps(SelectionKey.OP_ACCEPT);
        }
    }

    private static void pauseAfterTrouble() {
        try {
            Thread.sleep(10);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** How long select may sleep: until the next handshake or parked request runs out (0: no deadline). */
    private long selectTimeoutMillis() {
        long next = Long.MAX_VALUE;
        if (!handshaking.isEmpty()) {
            next = handshaking.iterator().next().handshakeDeadline();
        }
        next = Math.min(next, parkedRequests.nextDeadline());
        if (acceptResumesAt != 0) {
            next = Math.min(next, acceptResumesAt);
        }
        if (next == Long.MAX_VALUE) {
            return 0;
        }
        return Math.max(1, (next - now() + 999_999) / 1_000_000);
    }

    private long now() {
        return System.nanoTime() - origin;
    }

    private void ready(SelectionKey key) {
        if (key == acceptKey) {
            acceptAll();
            return;
        }
        StoreConnection c = (StoreConnection) key.attachment();
        try {
            if (key.isValid() && key.isWritable()) {
                c.flush();
            }
            if (key.isValid() && key.isReadable()) {
                c.read();
            }
        } catch (IOException | RuntimeException | Error e) {
            c.failed(e);
        }
    }

    private void acceptAll() {
        while (!closed) {
            SocketChannel channel;
            try {
                channel = listener.accept();
                if (channel == null) {
                    return;
                }
            } catch (IOException | RuntimeException e) {
                if (closed) {
                    return;
                }
                // Out of descriptors, most likely: stop accepting for a while instead of spinning on the error.
                long pause = gate.acceptFailedPause(e);
                acceptKey.interestOps(0);
                acceptResumesAt = now() + pause * 1_000_000;
                return;
            }
            try {
                channel.configureBlocking(false);
                channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
                StoreConnection c = new StoreConnection(channel, new Handshake.ServerSide(secret,
                        RendezvousProtocol.PURPOSE, Handshake.ClaimCheck.ANY),
                        now() + limits.handshakeTimeout().toNanos(), shared);
                c.registered(channel.register(selector, SelectionKey.OP_READ, c));
                connections.add(c);
                handshaking.add(c);
                gate.arrived(c);
            } catch (IOException | RuntimeException e) {
                closeQuietly(channel);
            }
        }
    }

    private void expireHandshakes(long now) {
        while (!handshaking.isEmpty()) {
            StoreConnection c = handshaking.iterator().next();
            if (now < c.handshakeDeadline()) {
                return;
            }
            gate.rejected(c.remote(), "the handshake did not finish within " + Durations.describe(limits.handshakeTimeout()));
            c.close(false);
        }
    }

    /** Requests served since start (every PUT, PUT_IF_ABSENT, TRY_GET, GET and GET_EACH, after the handshakes). */
    public long requests() {
        return counts.requests();
    }

    /** Request and reply bytes since start, handshakes left out. */
    public long requestBytes() {
        return counts.bytes();
    }

    /** Connections in their handshake now (for tests of the limits strangers meet). */
    int unauthenticated() {
        return gate.unauthenticated();
    }

    /** The handshake of {@code c} is over, passed or not: it no longer counts against the strangers' limits. */
    void handshakeOver(StoreConnection c) {
        handshaking.remove(c);
        gate.settled(c);
    }

    /** {@code c} closed; the serving thread need not close it on the way out. */
    void dropped(StoreConnection c) {
        connections.remove(c);
    }

    /** Once true, troubles of the connections being dropped are not worth a warning. */
    boolean isClosing() {
        return closed;
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
                    + prefix + values.firstMissingNow(prefix, count) + "'", closing);
        }
    }

    @Override
    public Optional<String> tryGet(String key) {
        return values.tryGet(key);
    }

    @Override
    public String get(String key, Duration timeout) {
        try {
            return values.get(key, timeout);
        } catch (KoloTimeoutException timedOut) {
            throw new KoloTimeoutException("timed out after " + Durations.describe(timeout)
                    + " waiting for key '" + key + "' in the rendezvous store at " + hostPort());
        } catch (IllegalStateException closing) {
            throw new KoloException("the rendezvous server at " + hostPort() + " was closed while waiting for key '"
                    + key + "'", closing);
        }
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
        selector.wakeup();
        // The serving thread closes the listening socket on its way out: wait for it, so that once close returns
        // nothing listens on the port any more.
        if (thread != Thread.currentThread()) {
            try {
                thread.join(SERVER_EXIT);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        values.close();
    }

    static void closeQuietly(AutoCloseable c) {
        if (c == null) {
            return;
        }
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
