package io.kolo.bootstrap;

import io.kolo.KoloException;
import io.kolo.KoloTimeoutException;
import io.kolo.launch.JobSecret;

import java.io.Closeable;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.Optional;
import java.util.TreeSet;
import java.util.Comparator;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.LongAdder;

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
 */
public final class RendezvousServer implements KeyValueStore {
    private static final System.Logger LOG = LazyLogger.of(RendezvousServer.class);

    static {
        // A server whose process has run out of descriptors (strangers at its port) must still answer its ranks, and
        // by then even loading a class fails: every class the serving thread needs comes with the server's, not with
        // the first connection or request that needs it.
        RendezvousProtocol.load();
        for (Class<?> c : List.of(RendezvousServer.class, RendezvousProtocol.class, Handshake.class, InMemoryStore.class)) {
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
    private static final int FIRST_REQUEST_BUFFER = 4096;
    private static final int BACKLOG = 1024;
    /** As {@link InMemoryStore}'s own limit on complete tables: far more than a job reads at once. */
    private static final int MAX_ENCODED_TABLES = 64;
    /** A wait longer than this (about 290 years) is as good as forever, and keeps deadlines far from overflowing. */
    private static final long FOREVER_MS = Long.MAX_VALUE / 4 / 1_000_000;

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
    /** Connections whose parked request the store called back; handed from the writing thread to the serving one. */
    private final ConcurrentLinkedQueue<Connection> woken = new ConcurrentLinkedQueue<>();
    /** What the job's ranks asked of the store, for {@code kolo bench scale}: how start-up load grows with the job. */
    private final LongAdder requests = new LongAdder();
    private final LongAdder bytesReceived = new LongAdder();
    private final LongAdder bytesSent = new LongAdder();
    private volatile boolean closed;
    private final Thread thread;

    // Owned by the serving thread.
    /** Connections in their handshake, oldest first (all have the same deadline, so the oldest expires first). */
    private final LinkedHashSet<Connection> handshaking = new LinkedHashSet<>();
    /** Parked requests by deadline (then by arrival, so that equal deadlines stay apart). */
    private final TreeSet<Parked> deadlines = new TreeSet<>(
            Comparator.<Parked>comparingLong(p -> p.deadline).thenComparingLong(p -> p.sequence));
    private long parkedSoFar;
    /**
     * The last reply to each table read (GET_EACH), by prefix and count, with the store's list it encodes: every rank
     * reads the same table, so n readers cost one encoding while the store hands out the same list.
     */
    private final Map<String, EncodedTable> encodedTables = new HashMap<>();
    private final Set<Connection> connections = new HashSet<>();
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
            for (Connection c : new ArrayList<>(connections)) {
                c.close(false);
            }
            closeQuietly(listener);
            closeQuietly(selector);
        }
    }

    private void serveOnce() throws IOException {
        selector.select(this::ready, selectTimeoutMillis());
        for (Connection c; (c = woken.poll()) != null; ) {
            try {
                c.retryParked();
            } catch (RuntimeException | Error e) {
                c.failed(e);
            }
        }
        long now = now();
        expireHandshakes(now);
        expireParked(now);
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
            next = handshaking.iterator().next().handshakeDeadline;
        }
        if (!deadlines.isEmpty()) {
            next = Math.min(next, deadlines.first().deadline);
        }
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
        Connection c = (Connection) key.attachment();
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
                Connection c = new Connection(channel);
                c.key = channel.register(selector, SelectionKey.OP_READ, c);
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
            Connection c = handshaking.iterator().next();
            if (now < c.handshakeDeadline) {
                return;
            }
            gate.rejected(c.remote, "the handshake did not finish within " + Durations.describe(limits.handshakeTimeout()));
            c.close(false);
        }
    }

    private void expireParked(long now) {
        for (Parked p; !deadlines.isEmpty() && now >= (p = deadlines.first()).deadline; ) {
            deadlines.pollFirst();
            if (p.connection.parked == p) {
                try {
                    p.connection.answerParked(true);
                } catch (RuntimeException | Error e) {
                    p.connection.failed(e);
                }
            }
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

    /** A GET or GET_EACH waiting in the store for its keys, until {@link #deadline} ({@link #now()} terms). */
    private static final class Parked {
        final Connection connection;
        final RendezvousProtocol.Request request;
        final long deadline;
        final long sequence;
        InMemoryStore.Wait wait = InMemoryStore.Wait.NONE;

        Parked(Connection connection, RendezvousProtocol.Request request, long deadline, long sequence) {
            this.connection = connection;
            this.request = request;
            this.deadline = deadline;
            this.sequence = sequence;
        }
    }

    /**
     * One client's connection, owned by the serving thread: its handshake until it authenticates, then its requests,
     * one at a time (a client waits for each answer, so a request is read only once the one before is answered).
     */
    private final class Connection implements Closeable {
        final SocketChannel channel;
        final SocketAddress remote;
        SelectionKey key;
        /** The handshake in progress; null once the client authenticated. */
        Handshake.ServerSide handshake = new Handshake.ServerSide(secret, RendezvousProtocol.PURPOSE,
                Handshake.ClaimCheck.ANY);
        final long handshakeDeadline = now() + limits.handshakeTimeout().toNanos();
        /** Bytes read and not yet consumed, in write mode; a handshake's bytes at most before it authenticates. */
        ByteBuffer in = ByteBuffer.allocate(Handshake.ServerSide.MAX_CLIENT_BYTES);
        final ArrayDeque<ByteBuffer> out = new ArrayDeque<>();
        Parked parked;
        boolean open = true;

        Connection(SocketChannel channel) throws IOException {
            this.channel = channel;
            this.remote = channel.getRemoteAddress();
        }

        void read() throws IOException {
            if (!in.hasRemaining()) {
                // Full: a client is sending requests before reading its answers; read on once they are consumed.
                setInterest();
                return;
            }
            int n = channel.read(in);
            if (n < 0) {
                // The client went away (a rank finished or died); that is its business, not ours.
                if (handshake != null) {
                    gate.rejected(remote, "closed the connection during the handshake");
                }
                close(false);
                return;
            }
            if (handshake != null) {
                continueHandshake();
            }
            if (handshake == null) {
                serveRequests();
            }
            setInterest();
        }

        private void continueHandshake() throws IOException {
            in.flip();
            try {
                while (handshake.wanted() > 0 && in.remaining() >= handshake.wanted()) {
                    byte[] step = new byte[handshake.wanted()];
                    in.get(step);
                    byte[] reply = handshake.take(step);
                    if (reply != null) {
                        send(ByteBuffer.wrap(reply));
                    }
                }
            } catch (Handshake.Rejected e) {
                gate.rejected(remote, e.getMessage());
                close(false);
                return;
            } finally {
                in.compact();
            }
            if (handshake.done()) {
                handshake = null;
                handshaking.remove(this);
                gate.settled(this);
                ByteBuffer requestsIn = ByteBuffer.allocate(FIRST_REQUEST_BUFFER);
                in.flip();
                requestsIn.put(in);
                in = requestsIn;
            }
        }

        /** Answers the requests read, in order, until one must wait (or its answer must leave first). */
        private void serveRequests() throws IOException {
            while (open && parked == null && out.isEmpty()) {
                in.flip();
                RendezvousProtocol.Request r;
                try {
                    r = RendezvousProtocol.decode(in);
                } finally {
                    in.compact();
                }
                if (r == null) {
                    if (!in.hasRemaining()) {
                        grow();
                    }
                    return;
                }
                bytesReceived.add(r.bytes());
                answer(r);
            }
        }

        private void grow() throws IOException {
            if (in.capacity() >= RendezvousProtocol.MAX_REQUEST_BYTES) {
                throw new IOException("a rendezvous request longer than " + RendezvousProtocol.MAX_REQUEST_BYTES + " bytes");
            }
            ByteBuffer bigger = ByteBuffer.allocate(Math.min(RendezvousProtocol.MAX_REQUEST_BYTES, in.capacity() * 2));
            in.flip();
            bigger.put(in);
            in = bigger;
        }

        private void answer(RendezvousProtocol.Request r) throws IOException {
            switch (r.op()) {
                case RendezvousProtocol.PUT -> {
                    values.put(r.key(), r.value());
                    reply(RendezvousProtocol.reply(RendezvousProtocol.OK));
                }
                case RendezvousProtocol.PUT_IF_ABSENT -> reply(RendezvousProtocol.reply(values.putIfAbsent(r.key(), r.value())
                        ? RendezvousProtocol.STORED : RendezvousProtocol.PRESENT));
                case RendezvousProtocol.TRY_GET -> replyValue(values.tryGet(r.key()));
                case RendezvousProtocol.GET, RendezvousProtocol.GET_EACH -> {
                    // Capped far beyond any job's life: a client may ask to wait "forever".
                    long nanos = r.timeoutMs() >= FOREVER_MS ? FOREVER_MS * 1_000_000 : r.timeoutMs() * 1_000_000;
                    parked = new Parked(this, r, now() + nanos, parkedSoFar++);
                    answerParked(false);
                }
                default -> throw new IOException("unknown rendezvous request " + r.op());
            }
        }

        /**
         * Answers the parked request if its keys are there (or the wait ran out, or the store closed); otherwise parks
         * it in the store until they come.
         */
        void answerParked(boolean timedOut) {
            Parked p = parked;
            RendezvousProtocol.Request r = p.request;
            boolean each = r.op() == RendezvousProtocol.GET_EACH;
            ByteBuffer answer = null;
            if (each) {
                Optional<List<String>> found = values.tryGetEach(r.key(), r.count());
                if (found.isPresent()) {
                    answer = encoded(r.key(), r.count(), found.get());
                } else if (timedOut || values.isClosed() || r.timeoutMs() == 0) {
                    answer = RendezvousProtocol.missing(values.firstMissingNow(r.key(), r.count()));
                }
            } else {
                Optional<String> found = values.tryGet(r.key());
                if (found.isPresent()) {
                    answer = RendezvousProtocol.present(found.get());
                } else if (timedOut || values.isClosed() || r.timeoutMs() == 0) {
                    answer = RendezvousProtocol.reply(RendezvousProtocol.ABSENT);
                }
            }
            if (answer == null) {
                p.wait.cancel();
                Runnable wake = () -> wake(this);
                p.wait = each ? values.whenEachPresent(r.key(), r.count(), wake) : values.whenPresent(r.key(), wake);
                deadlines.add(p);
                return;
            }
            p.wait.cancel();
            deadlines.remove(p);
            parked = null;
            try {
                reply(answer);
                serveRequests();
                setInterest();
            } catch (IOException | RuntimeException | Error e) {
                failed(e);
            }
        }

        void retryParked() {
            if (open && parked != null) {
                answerParked(false);
            }
        }

        private void replyValue(Optional<String> value) throws IOException {
            reply(value.map(RendezvousProtocol::present).orElseGet(() -> RendezvousProtocol.reply(RendezvousProtocol.ABSENT)));
        }

        private void reply(ByteBuffer answer) throws IOException {
            // Counted before the answer leaves, so that a client that has its answer sees its request counted.
            requests.increment();
            bytesSent.add(answer.remaining());
            send(answer);
        }

        private void send(ByteBuffer bytes) throws IOException {
            out.addLast(bytes);
            writeOut();
        }

        /** Writes what the socket takes now; the rest waits for the socket to be writable. */
        private void writeOut() throws IOException {
            while (!out.isEmpty()) {
                ByteBuffer b = out.peekFirst();
                channel.write(b);
                if (b.hasRemaining()) {
                    return;
                }
                out.pollFirst();
            }
        }

        /** The socket is writable again: the rest of the answers leave, then the requests that waited for them. */
        void flush() throws IOException {
            writeOut();
            if (out.isEmpty() && handshake == null && parked == null) {
                serveRequests();
            }
            setInterest();
        }

        private void setInterest() {
            if (!open || !key.isValid()) {
                return;
            }
            int ops = (in.hasRemaining() ? SelectionKey.OP_READ : 0) | (out.isEmpty() ? 0 : SelectionKey.OP_WRITE);
            if (key.interestOps() != ops) {
                key.interestOps(ops);
            }
        }

        void failed(Throwable e) {
            if (open && !closed && !(e instanceof IOException io && isReset(io))) {
                troubles.warn("dropping rendezvous connection from " + remote + ": " + e);
            }
            close(false);
        }

        /** For the {@link ConnectionGate}, which drops the oldest handshake to make room: the client sees a reset. */
        @Override
        public void close() {
            close(true);
        }

        void close(boolean reset) {
            if (!open) {
                return;
            }
            open = false;
            if (handshake != null) {
                handshaking.remove(this);
                gate.settled(this);
            }
            in = ByteBuffer.allocate(0);
            out.clear();
            if (parked != null) {
                parked.wait.cancel();
                deadlines.remove(parked);
                parked = null;
            }
            connections.remove(this);
            try {
                if (reset) {
                    // A reset, not an orderly close, tells a client dropped for room from one refused for its secret.
                    channel.setOption(StandardSocketOptions.SO_LINGER, 0);
                }
            } catch (IOException | RuntimeException ignored) {
                // Closing anyway.
            }
            closeQuietly(channel);
        }
    }

    private static boolean isReset(IOException e) {
        String m = String.valueOf(e.getMessage());
        return m.contains("reset") || m.contains("Broken pipe");
    }

    /** {@code table}'s GET_EACH reply, encoded again only when the store's list is not the one encoded last. */
    private ByteBuffer encoded(String prefix, int count, List<String> table) {
        String key = prefix + '\0' + count;
        EncodedTable last = encodedTables.get(key);
        if (last == null || last.table != table) {
            if (encodedTables.size() >= MAX_ENCODED_TABLES) {
                encodedTables.clear();
            }
            last = new EncodedTable(table, RendezvousProtocol.each(table));
            encodedTables.put(key, last);
        }
        // Each connection sends from its own position; the bytes are shared and never written.
        return last.reply.duplicate();
    }

    /** A table as the store handed it out, and its GET_EACH reply. */
    private record EncodedTable(List<String> table, ByteBuffer reply) {
    }

    private void wake(Connection c) {
        woken.add(c);
        selector.wakeup();
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

    private static void closeQuietly(AutoCloseable c) {
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
