package io.kolo.transport;

import io.kolo.KoloException;
import io.kolo.KoloTimeoutException;
import io.kolo.bootstrap.Handshake;
import io.kolo.bootstrap.JobSecret;
import io.kolo.bootstrap.KeyValueStore;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.StandardSocketOptions;
import java.net.UnknownHostException;
import java.nio.channels.CancelledKeyException;
import java.nio.channels.ClosedSelectorException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.StringJoiner;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.function.Consumer;

/**
 * A {@link Transport} over a full mesh of TCP connections, one per pair of ranks.
 *
 * <p>Every connection is authenticated with the job secret ({@link Handshake}, purpose {@code "data"})
 * before any byte of it is used; strangers are logged and dropped. The listening socket is closed as soon
 * as the mesh is complete, so no data port stays open. A lost connection, a timeout or {@link #abort}
 * leaves the transport dead: every later call fails at once with the first failure.
 */
public final class TcpTransport implements Transport {
    private static final System.Logger LOG = System.getLogger(TcpTransport.class.getName());
    private static final String PURPOSE = "data";
    private static final int SOCKET_BUFFER_BYTES = 4 << 20;
    private static final int SPINS = 64;
    private static final int YIELDS = 8;
    private static final long SELECT_MILLIS = 50;
    private static final Consumer<SelectionKey> IGNORE = key -> { };

    private final int rank;
    private final int size;
    private final Duration timeout;
    private final long timeoutNanos;
    private final SocketChannel[] channels;
    private final SelectionKey[] keys;
    private final Selector selector;
    private final TcpTransfer out = new TcpTransfer(true);
    private final TcpTransfer in = new TcpTransfer(false);
    private final AtomicReference<RuntimeException> failure = new AtomicReference<>();

    private TcpTransport(int rank, int size, Duration timeout, SocketChannel[] channels) throws IOException {
        this.rank = rank;
        this.size = size;
        this.timeout = timeout;
        this.timeoutNanos = timeout.toNanos();
        this.channels = channels;
        this.keys = new SelectionKey[size];
        this.selector = Selector.open();
        for (int peer = 0; peer < size; peer++) {
            if (channels[peer] != null) {
                channels[peer].configureBlocking(false);
                keys[peer] = channels[peer].register(selector, 0);
            }
        }
    }

    /**
     * Builds the mesh: listens on {@code bindAddress} (ephemeral port), publishes {@code addr/<rank>} in
     * {@code store}, connects to every lower rank and accepts every higher one.
     *
     * @param startTimeout how long to wait for the other ranks to appear and connect
     * @param timeout      how long a data call may go without progress before it fails
     * @throws KoloTimeoutException naming the missing ranks when the mesh does not form in time
     */
    public static TcpTransport connect(int rank, int size, InetAddress bindAddress, KeyValueStore store,
                                       JobSecret secret, Duration startTimeout, Duration timeout) {
        if (size < 1 || rank < 0 || rank >= size) {
            throw new IllegalArgumentException("rank " + rank + " is outside a job of size " + size);
        }
        Objects.requireNonNull(bindAddress, "bindAddress");
        Objects.requireNonNull(store, "store");
        Objects.requireNonNull(secret, "secret");
        if (startTimeout.isNegative() || startTimeout.isZero() || timeout.isNegative() || timeout.isZero()) {
            throw new IllegalArgumentException("timeouts must be positive: start " + startTimeout
                    + ", data " + timeout);
        }
        try (TcpMeshBuilder builder = new TcpMeshBuilder(rank, size, bindAddress, store, secret, startTimeout)) {
            SocketChannel[] channels = builder.build();
            try {
                return new TcpTransport(rank, size, timeout, channels);
            } catch (IOException e) {
                closeAll(channels);
                throw new KoloException("rank " + rank + " could not set up its data-plane selector: "
                        + e.getMessage(), e);
            }
        }
    }

    @Override
    public int rank() {
        return rank;
    }

    @Override
    public int size() {
        return size;
    }

    @Override
    public void send(int peer, MemorySegment src, long offset, long length) {
        checkUsable();
        SocketChannel ch = channel(peer);
        Objects.checkFromIndexSize(offset, length, src.byteSize());
        out.begin(peer, ch, src, offset, length);
        in.begin(-1, null, null, 0, 0);
        progress();
    }

    @Override
    public void recv(int peer, MemorySegment dst, long offset, long length) {
        checkUsable();
        SocketChannel ch = channel(peer);
        Objects.checkFromIndexSize(offset, length, dst.byteSize());
        out.begin(-1, null, null, 0, 0);
        in.begin(peer, ch, dst, offset, length);
        progress();
    }

    @Override
    public void sendRecv(int sendPeer, MemorySegment src, long srcOffset, long srcLength,
                         int recvPeer, MemorySegment dst, long dstOffset, long dstLength) {
        checkUsable();
        SocketChannel sendCh = channel(sendPeer);
        SocketChannel recvCh = channel(recvPeer);
        Objects.checkFromIndexSize(srcOffset, srcLength, src.byteSize());
        Objects.checkFromIndexSize(dstOffset, dstLength, dst.byteSize());
        out.begin(sendPeer, sendCh, src, srcOffset, srcLength);
        in.begin(recvPeer, recvCh, dst, dstOffset, dstLength);
        progress();
    }

    /**
     * Interleaves the pending send and receive until both are done. Spins first (the common case in a
     * ring step is that the peer is ready within microseconds), then yields, then sleeps in the selector
     * so an idle wait costs no CPU.
     */
    private void progress() {
        long lastProgress = System.nanoTime();
        int idle = 0;
        try {
            while (!out.done() || !in.done()) {
                checkUsable();
                boolean moved = false;
                if (!out.done()) {
                    moved = out.step() > 0;
                }
                if (!in.done()) {
                    long n;
                    try {
                        n = in.step();
                    } catch (IOException e) {
                        throw new TcpPeerIOException(in.peer, e);
                    }
                    if (n < 0) {
                        throw lost(in.peer, "the connection was closed", null);
                    }
                    moved |= n > 0;
                }
                if (moved) {
                    idle = 0;
                    lastProgress = System.nanoTime();
                } else if (++idle <= SPINS) {
                    Thread.onSpinWait();
                } else if (idle <= SPINS + YIELDS) {
                    Thread.yield();
                } else {
                    if (System.nanoTime() - lastProgress >= timeoutNanos) {
                        throw fail(timedOut());
                    }
                    try {
                        awaitReady();
                    } catch (IOException e) {
                        throw fail(new KoloException("rank " + rank + ": waiting for the network failed: "
                                + e.getMessage(), e));
                    }
                }
            }
        } catch (TcpPeerIOException e) {
            throw lost(e.peer, e.getCause().getMessage(), e.getCause());
        } catch (IOException e) {
            // Only the send side reaches here: receive errors are wrapped with their peer above.
            throw lost(out.peer, e.getMessage(), e);
        } catch (ClosedSelectorException | CancelledKeyException e) {
            RuntimeException first = failure.get();
            throw first != null ? first : fail(new KoloException("rank " + rank + ": transport closed", e));
        } finally {
            out.finish();
            in.finish();
        }
    }

    private void awaitReady() throws IOException {
        SelectionKey sendKey = out.done() ? null : keys[out.peer];
        SelectionKey recvKey = in.done() ? null : keys[in.peer];
        if (sendKey != null) {
            sendKey.interestOps(SelectionKey.OP_WRITE);
        }
        if (recvKey != null) {
            recvKey.interestOps(recvKey == sendKey ? SelectionKey.OP_READ | SelectionKey.OP_WRITE
                    : SelectionKey.OP_READ);
        }
        try {
            selector.select(IGNORE, SELECT_MILLIS);
        } finally {
            if (sendKey != null && sendKey.isValid()) {
                sendKey.interestOps(0);
            }
            if (recvKey != null && recvKey.isValid()) {
                recvKey.interestOps(0);
            }
        }
    }

    private KoloTimeoutException timedOut() {
        StringBuilder what = new StringBuilder();
        if (!out.done()) {
            what.append("to send ").append(out.total()).append(" bytes to rank ").append(out.peer)
                    .append(" (").append(out.total() - out.remaining()).append(" sent)");
        }
        if (!in.done()) {
            if (!what.isEmpty()) {
                what.append(" and ");
            }
            what.append("to receive ").append(in.total()).append(" bytes from rank ").append(in.peer)
                    .append(" (").append(in.total() - in.remaining()).append(" received)");
        }
        return new KoloTimeoutException("rank " + rank + " timed out after " + describe(timeout) + " waiting "
                + what + "; raise KOLO_TIMEOUT_SECONDS if ranks legitimately wait this long");
    }

    private RuntimeException lost(int peer, String detail, Throwable cause) {
        RuntimeException first = failure.get();
        if (first != null) {
            // Our own abort or close broke the channel; report that, not its side effect.
            return first;
        }
        return fail(new PeerFailedException(peer, "lost connection to rank " + peer
                + " (it exited, crashed or aborted): " + detail, cause));
    }

    /** Records the first failure, releases every connection, and returns the first failure. */
    private RuntimeException fail(RuntimeException cause) {
        failure.compareAndSet(null, cause);
        release();
        return failure.get();
    }

    private void checkUsable() {
        RuntimeException first = failure.get();
        if (first != null) {
            throw first;
        }
    }

    private SocketChannel channel(int peer) {
        if (peer < 0 || peer >= size || peer == rank) {
            throw new IllegalArgumentException("rank " + rank + " cannot exchange with rank " + peer
                    + " in a job of size " + size);
        }
        return channels[peer];
    }

    @Override
    public void abort(RuntimeException cause) {
        Objects.requireNonNull(cause, "cause");
        fail(cause);
    }

    @Override
    public void close() {
        fail(new KoloException("rank " + rank + ": the TCP transport is closed"));
    }

    private void release() {
        // Closing a registered channel shuts down its output, so peers read end-of-stream at once;
        // closing the selector then frees the descriptors.
        closeAll(channels);
        selector.wakeup();
        try {
            selector.close();
        } catch (IOException e) {
            LOG.log(System.Logger.Level.DEBUG, "closing the selector failed", e);
        }
    }

    private static void closeAll(SocketChannel[] channels) {
        for (SocketChannel ch : channels) {
            if (ch != null) {
                try {
                    ch.close();
                } catch (IOException e) {
                    LOG.log(System.Logger.Level.DEBUG, "closing a data channel failed", e);
                }
            }
        }
    }

    static String describe(Duration d) {
        long ms = d.toMillis();
        return ms % 1000 == 0 ? (ms / 1000) + " s" : ms + " ms";
    }

    /** Carries the receive side's peer out of the transfer loop. */
    private static final class TcpPeerIOException extends IOException {
        private static final long serialVersionUID = 1L;
        final int peer;

        TcpPeerIOException(int peer, IOException cause) {
            super(cause);
            this.peer = peer;
        }
    }

    /** Connection setup; separate so the data path above carries none of its state. */
    static final class TcpMeshBuilder implements AutoCloseable {
        private static final long MAX_BACKOFF_MILLIS = 250;
        private final int rank;
        private final int size;
        private final InetAddress bindAddress;
        private final KeyValueStore store;
        private final JobSecret secret;
        private final Duration startTimeout;
        private final long deadline;
        private final AtomicReferenceArray<SocketChannel> accepted;
        private final CountDownLatch higherRanks;
        private final Set<SocketChannel> handshaking = ConcurrentHashMap.newKeySet();
        private final SocketChannel[] channels;
        private volatile boolean finished;
        private ServerSocketChannel server;

        TcpMeshBuilder(int rank, int size, InetAddress bindAddress, KeyValueStore store, JobSecret secret,
                       Duration startTimeout) {
            this.rank = rank;
            this.size = size;
            this.bindAddress = bindAddress;
            this.store = store;
            this.secret = secret;
            this.startTimeout = startTimeout;
            this.deadline = System.nanoTime() + startTimeout.toNanos();
            this.accepted = new AtomicReferenceArray<>(size);
            this.higherRanks = new CountDownLatch(size - 1 - rank);
            this.channels = new SocketChannel[size];
        }

        SocketChannel[] build() {
            boolean ok = false;
            try {
                if (size == 1) {
                    ok = true;
                    return channels;
                }
                listen();
                store.put("addr/" + rank, format(publishedAddress(), server.socket().getLocalPort()));
                InetSocketAddress[] addresses = lookUpPeers();
                for (int peer = 0; peer < rank; peer++) {
                    channels[peer] = connectTo(peer, addresses[peer]);
                }
                awaitHigherRanks();
                for (int peer = rank + 1; peer < size; peer++) {
                    channels[peer] = accepted.get(peer);
                }
                ok = true;
                return channels;
            } catch (IOException e) {
                throw new KoloException("rank " + rank + " could not open its data-plane port on "
                        + bindAddress.getHostAddress() + ": " + e.getMessage(), e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new KoloException("rank " + rank + " was interrupted while connecting to the other ranks", e);
            } finally {
                if (!ok) {
                    finished = true;
                    closeAll(channels);
                    for (int peer = 0; peer < size; peer++) {
                        SocketChannel ch = accepted.getAndSet(peer, null);
                        if (ch != null) {
                            closeQuietly(ch);
                        }
                    }
                }
            }
        }

        private void listen() throws IOException {
            server = ServerSocketChannel.open();
            // Set before bind so accepted sockets inherit it and window scaling is negotiated.
            server.setOption(StandardSocketOptions.SO_RCVBUF, SOCKET_BUFFER_BYTES);
            server.bind(new InetSocketAddress(bindAddress, 0), size + 16);
            Thread.ofVirtual().name("kolo-tcp-accept-" + rank).start(this::acceptLoop);
        }

        private InetAddress publishedAddress() {
            if (!bindAddress.isAnyLocalAddress()) {
                return bindAddress;
            }
            try {
                return InetAddress.getLocalHost();
            } catch (UnknownHostException e) {
                LOG.log(System.Logger.Level.WARNING, "rank {0} is bound to the wildcard address and cannot"
                        + " resolve its host name; publishing the loopback address (single-host jobs only)", rank);
                return InetAddress.getLoopbackAddress();
            }
        }

        /**
         * Ranks that have not published an address. If the store itself is gone by now (its host gave up at the
         * same moment), every rank from {@code firstUnknown} on is reported as missing.
         */
        private List<Integer> missingPeers(int firstUnknown) {
            List<Integer> missing = new ArrayList<>();
            for (int r = 0; r < size; r++) {
                if (r == rank) {
                    continue;
                }
                try {
                    if (store.tryGet("addr/" + r).isEmpty()) {
                        missing.add(r);
                    }
                } catch (KoloException storeGone) {
                    if (r >= firstUnknown) {
                        missing.add(r);
                    }
                }
            }
            return missing;
        }

        private InetSocketAddress[] lookUpPeers() {
            InetSocketAddress[] addresses = new InetSocketAddress[size];
            for (int peer = 0; peer < size; peer++) {
                if (peer == rank) {
                    continue;
                }
                String value;
                try {
                    value = store.get("addr/" + peer, remaining());
                } catch (KoloTimeoutException e) {
                    List<Integer> missing = missingPeers(peer);
                    throw new KoloTimeoutException("rank " + rank + " timed out after " + describe(startTimeout)
                            + " waiting for " + ranks(missing) + " to publish a data-plane address in the"
                            + " rendezvous store (they did not start, failed during startup, or cannot reach the"
                            + " rendezvous server); raise KOLO_START_TIMEOUT_SECONDS if they legitimately start"
                            + " this slowly");
                } catch (KoloException e) {
                    // Usually the store's host (rank 0) hit its own start timeout first and exited: say what this
                    // rank was waiting for, not only that the store vanished.
                    throw new KoloException("rank " + rank + " was waiting for rank " + peer + " to publish its"
                            + " data-plane address when the rendezvous store went away (" + e.getMessage() + "); rank "
                            + peer + " did not start in time or failed during startup; raise"
                            + " KOLO_START_TIMEOUT_SECONDS if it legitimately starts this slowly", e);
                }
                addresses[peer] = parse(peer, value);
            }
            return addresses;
        }

        private SocketChannel connectTo(int peer, InetSocketAddress address) throws InterruptedException {
            long backoff = 5;
            Exception last = null;
            while (true) {
                long left = remainingMillis();
                if (left <= 0) {
                    throw new KoloTimeoutException("rank " + rank + " timed out after " + describe(startTimeout)
                            + " connecting to rank " + peer + " at " + format(address.getAddress(), address.getPort())
                            + (last == null ? "" : " (last error: " + last.getMessage() + ")")
                            + "; check that the hosts can reach each other on KOLO_IFACE, or raise"
                            + " KOLO_START_TIMEOUT_SECONDS if rank " + peer + " legitimately starts this slowly");
                }
                SocketChannel ch = null;
                try {
                    ch = SocketChannel.open();
                    configure(ch);
                    if (!bindAddress.isAnyLocalAddress()) {
                        // Leave through the chosen interface on multi-homed hosts.
                        ch.bind(new InetSocketAddress(bindAddress, 0));
                    }
                    ch.socket().connect(address, (int) Math.max(1, Math.min(left, Integer.MAX_VALUE)));
                    ch.socket().setSoTimeout((int) Math.max(1, Math.min(remainingMillis(), Integer.MAX_VALUE)));
                    Handshake.run(ch.socket(), secret, PURPOSE);
                    DataOutputStream o = new DataOutputStream(ch.socket().getOutputStream());
                    o.writeInt(rank);
                    o.writeInt(size);
                    o.writeInt(peer);
                    o.flush();
                    int answer = new DataInputStream(ch.socket().getInputStream()).readInt();
                    if (answer != peer) {
                        throw new IOException("the process at " + address + " says it is rank " + answer
                                + ", expected rank " + peer);
                    }
                    ch.socket().setSoTimeout(0);
                    return ch;
                } catch (Handshake.Rejected e) {
                    LOG.log(System.Logger.Level.WARNING, "rank {0}: the process at {1} (published as rank {2})"
                            + " failed the data-plane handshake: {3}", rank, address, peer, e.getMessage());
                    last = e;
                } catch (IOException e) {
                    last = e;
                }
                closeQuietly(ch);
                Thread.sleep(Math.max(0, Math.min(backoff, remainingMillis())));
                backoff = Math.min(backoff * 2, MAX_BACKOFF_MILLIS);
            }
        }

        private void awaitHigherRanks() throws InterruptedException {
            if (higherRanks.await(Math.max(0, remaining().toNanos()), TimeUnit.NANOSECONDS)) {
                return;
            }
            List<Integer> missing = new ArrayList<>();
            for (int peer = rank + 1; peer < size; peer++) {
                if (accepted.get(peer) == null) {
                    missing.add(peer);
                }
            }
            throw new KoloTimeoutException("rank " + rank + " timed out after " + describe(startTimeout)
                    + " waiting for " + ranks(missing) + " to connect to its data-plane port (they failed during"
                    + " startup, cannot reach this host on KOLO_IFACE, or use a different KOLO_SECRET); raise"
                    + " KOLO_START_TIMEOUT_SECONDS if they legitimately start this slowly");
        }

        private void acceptLoop() {
            while (!finished) {
                SocketChannel ch;
                try {
                    ch = server.accept();
                } catch (IOException e) {
                    if (!finished) {
                        LOG.log(System.Logger.Level.DEBUG, "rank {0}: accept stopped: {1}", rank, e.getMessage());
                    }
                    return;
                }
                handshaking.add(ch);
                // One thread per connection, so a silent stranger can't hold up the real peers.
                Thread.ofVirtual().name("kolo-tcp-handshake-" + rank).start(() -> admit(ch));
            }
        }

        private void admit(SocketChannel ch) {
            SocketAddress remote = null;
            try {
                remote = ch.getRemoteAddress();
                configure(ch);
                ch.socket().setSoTimeout((int) Math.max(1, Math.min(remainingMillis(), Integer.MAX_VALUE)));
                Handshake.run(ch.socket(), secret, PURPOSE);
                DataInputStream i = new DataInputStream(ch.socket().getInputStream());
                int peer = i.readInt();
                int peerSize = i.readInt();
                int target = i.readInt();
                if (peerSize != size || target != rank || peer <= rank || peer >= size) {
                    throw new IOException("an authenticated peer claims to be rank " + peer + " of " + peerSize
                            + " connecting to rank " + target + ", but this is rank " + rank + " of " + size
                            + " (are two jobs sharing a KOLO_SECRET?)");
                }
                if (!accepted.compareAndSet(peer, null, ch)) {
                    throw new IOException("a second connection claims to be rank " + peer);
                }
                if (finished) {
                    // Setup already gave up; nobody will pick this channel up.
                    closeQuietly(ch);
                    return;
                }
                DataOutputStream o = new DataOutputStream(ch.socket().getOutputStream());
                o.writeInt(rank);
                o.flush();
                ch.socket().setSoTimeout(0);
                handshaking.remove(ch);
                higherRanks.countDown();
            } catch (IOException e) {
                handshaking.remove(ch);
                closeQuietly(ch);
                if (!finished) {
                    LOG.log(System.Logger.Level.WARNING, "rank {0} rejected a data-plane connection from {1}: {2}",
                            rank, remote, e.getMessage());
                }
            }
        }

        private static void configure(SocketChannel ch) throws IOException {
            ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
            ch.setOption(StandardSocketOptions.SO_SNDBUF, SOCKET_BUFFER_BYTES);
            ch.setOption(StandardSocketOptions.SO_RCVBUF, SOCKET_BUFFER_BYTES);
        }

        private Duration remaining() {
            return Duration.ofNanos(Math.max(0, deadline - System.nanoTime()));
        }

        private long remainingMillis() {
            return TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
        }

        private static String ranks(List<Integer> missing) {
            if (missing.size() == 1) {
                return "rank " + missing.getFirst();
            }
            StringJoiner j = new StringJoiner(", ", "ranks ", "");
            missing.forEach(r -> j.add(String.valueOf(r)));
            return j.toString();
        }

        static String format(InetAddress address, int port) {
            String host = address.getHostAddress();
            return (address instanceof Inet6Address ? "[" + host + "]" : host) + ":" + port;
        }

        private InetSocketAddress parse(int peer, String value) {
            int colon = value.lastIndexOf(':');
            try {
                if (colon <= 0) {
                    throw new IllegalArgumentException("no port");
                }
                String host = value.substring(0, colon);
                if (host.startsWith("[") && host.endsWith("]")) {
                    host = host.substring(1, host.length() - 1);
                }
                int port = Integer.parseInt(value.substring(colon + 1));
                // Published addresses are literals; resolving a name here is only for hand-made stores.
                return new InetSocketAddress(host, port);
            } catch (IllegalArgumentException e) {
                throw new KoloException("rank " + peer + " published an invalid data-plane address 'addr/" + peer
                        + "' = '" + value + "': expected host:port", e);
            }
        }

        /** Stops accepting (no data port stays open) and drops unfinished handshakes. */
        @Override
        public void close() {
            finished = true;
            if (server != null) {
                try {
                    server.close();
                } catch (IOException e) {
                    LOG.log(System.Logger.Level.DEBUG, "closing the data-plane listener failed", e);
                }
            }
            for (SocketChannel ch : handshaking) {
                closeQuietly(ch);
            }
        }

        private static void closeQuietly(SocketChannel ch) {
            if (ch != null) {
                try {
                    ch.close();
                } catch (IOException e) {
                    LOG.log(System.Logger.Level.DEBUG, "closing a channel failed", e);
                }
            }
        }
    }
}
