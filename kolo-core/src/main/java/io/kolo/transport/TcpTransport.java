package io.kolo.transport;

import io.kolo.KoloException;
import io.kolo.KoloTimeoutException;
import io.kolo.bootstrap.Handshake;
import io.kolo.bootstrap.KeyValueStore;
import io.kolo.bootstrap.LazyLogger;
import io.kolo.launch.JobSecret;

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
 * A {@link Transport} over TCP connections, one per pair of ranks that exchange messages, each opened when the pair
 * first does ({@link TcpConnections}): a ring or recursive doubling holds a few per rank, an alltoall one per other
 * rank.
 *
 * <p>Every connection is authenticated with the job secret ({@link Handshake}, purpose {@code "data"})
 * before any byte of it is used; strangers are logged and dropped. The listening socket stays open until every
 * higher rank has connected, or the transport closes. A lost connection, a timeout or {@link #abort}
 * leaves the transport dead: every later call fails at once with the first failure. A lost connection or an abort
 * closes the connections at once; a timeout leaves them open until {@link #abort} or {@link #close}, so that its
 * handler can say which rank stopped answering before the peers see this one go.
 */
public final class TcpTransport implements Transport {
    private static final System.Logger LOG = LazyLogger.of(TcpTransport.class);
    /**
     * Fixed, so the kernel does not start every connection small and grow it: a receive buffer larger than one step's
     * message never makes the sender wait for the reader.
     */
    static final int RECEIVE_BUFFER_BYTES = 4 << 20;
    /**
     * Small on purpose: a send buffer holds the bytes not yet acknowledged, so it bounds what one connection has in
     * flight. With the receive buffer's size, a ring step wrote its whole block (hundreds of KiB) as one burst, both
     * ranks at once, the path dropped segments and every step waited for fast retransmits: thousands of retransmitted
     * segments per benchmark run (docs/performance.md, "Measured constants").
     */
    static final int SEND_BUFFER_BYTES = 128 << 10;
    private static final int SPINS = 64;
    private static final int YIELDS = 8;
    /** Spins, yields, then sleeps in the selector: the peer is usually ready within microseconds in a ring step. */
    private final Backoff backoff = new Backoff(SPINS, YIELDS, 0);
    private static final long SELECT_MILLIS = 50;
    private static final Consumer<SelectionKey> IGNORE = key -> { };

    private final int rank;
    private final int size;
    private final Duration timeout;
    private final long timeoutNanos;
    private final TcpConnections connections;
    /** Opened on first use; owned by the transport's caller, as the channels' keys. */
    private final SocketChannel[] channels;
    private final SelectionKey[] keys;
    private final Selector selector;
    private final TcpTransfer out = new TcpTransfer(true);
    private final TcpTransfer in = new TcpTransfer(false);
    private final AtomicReference<RuntimeException> failure = new AtomicReference<>();
    private final StalledExchange stalled = new StalledExchange();

    private TcpTransport(int rank, int size, Duration timeout, TcpConnections connections) throws IOException {
        this.rank = rank;
        this.size = size;
        this.timeout = timeout;
        this.timeoutNanos = timeout.toNanos();
        this.connections = connections;
        this.channels = new SocketChannel[size];
        this.keys = new SelectionKey[size];
        this.selector = Selector.open();
    }

    /**
     * Listens on {@code bindAddress} (ephemeral port), publishes {@code addr/<rank>} in {@code store} and reads every
     * other rank's; connections follow, each on first use.
     *
     * @param startTimeout how long to wait for the other ranks to publish their addresses
     * @param timeout      how long a data call may go without progress before it fails
     * @throws KoloTimeoutException naming the missing ranks when they do not publish in time
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
        TcpConnections connections = new TcpConnections(rank, size, bindAddress, store, secret, startTimeout);
        connections.start();
        try {
            return new TcpTransport(rank, size, timeout, connections);
        } catch (IOException e) {
            connections.close();
            if (DescriptorLimit.exhausted(e)) {
                    throw new KoloException(DescriptorLimit.explain(rank, size), e);
                }
            throw new KoloException("rank " + rank + " could not set up its data-plane selector: "
                    + e.getMessage(), e);
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
        Objects.checkFromIndexSize(offset, length, src.byteSize());
        SocketChannel ch = channel(peer);
        out.begin(peer, ch, src, offset, length);
        in.begin(-1, null, null, 0, 0);
        progress();
    }

    @Override
    public void recv(int peer, MemorySegment dst, long offset, long length) {
        checkUsable();
        Objects.checkFromIndexSize(offset, length, dst.byteSize());
        SocketChannel ch = channel(peer);
        out.begin(-1, null, null, 0, 0);
        in.begin(peer, ch, dst, offset, length);
        progress();
    }

    @Override
    public void sendRecv(int sendPeer, MemorySegment src, long srcOffset, long srcLength,
                         int recvPeer, MemorySegment dst, long dstOffset, long dstLength) {
        checkUsable();
        Objects.checkFromIndexSize(srcOffset, srcLength, src.byteSize());
        Objects.checkFromIndexSize(dstOffset, dstLength, dst.byteSize());
        // A lower peer first: connecting to it needs nothing of it, while a higher one is waited for, and it may
        // itself be connecting to its own lower peer first (a ring: every rank connects to one and awaits the other).
        SocketChannel sendCh = sendPeer < recvPeer ? channel(sendPeer) : null;
        SocketChannel recvCh = channel(recvPeer);
        if (sendCh == null) {
            sendCh = channel(sendPeer);
        }
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
        backoff.reset();
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
                    backoff.reset();
                    stalled.clear();
                    lastProgress = System.nanoTime();
                } else if (!backoff.idle()) {
                    if (System.nanoTime() - lastProgress >= timeoutNanos) {
                        throw giveUp(timedOut(lastProgress));
                    }
                    showStall(lastProgress);
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
            stalled.clear();
            out.finish();
            in.finish();
        }
    }

    /** What {@link #stalledOn()} reads: the receive when it is pending (its peer sent nothing), else the send. */
    private void showStall(long since) {
        TcpTransfer waiting = in.done() ? out : in;
        stalled.show(waiting.peer, waiting == in, waiting.total(), waiting.total() - waiting.remaining(), since);
    }

    @Override
    public PeerWait stalledOn() {
        return stalled.read(rank);
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

    private KoloTimeoutException timedOut(long lastProgress) {
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
        TcpTransfer waiting = in.done() ? out : in;
        return new PeerTimeoutException("rank " + rank + " timed out after "
                + io.kolo.bootstrap.Durations.describe(timeout) + " waiting " + what
                + "; raise KOLO_TIMEOUT_SECONDS if ranks legitimately wait this long",
                new PeerWait(rank, waiting.peer, waiting == in, waiting.total(), waiting.total() - waiting.remaining(),
                        System.nanoTime() - lastProgress));
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

    /**
     * Records a timeout as the first failure but keeps the connections: the peers see them close only when whoever
     * handles it aborts (the job's failure diagnosis, once it has recorded which rank stopped answering), so they do
     * not take this rank, which closed them, for the one that failed.
     */
    private RuntimeException giveUp(RuntimeException cause) {
        failure.compareAndSet(null, cause);
        return failure.get();
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
        SocketChannel ch = channels[peer];
        return ch != null ? ch : open(peer);
    }

    /** The first exchange with {@code peer}: its connection, opened now, ready for the selector. */
    private SocketChannel open(int peer) {
        SocketChannel ch;
        try {
            ch = connections.open(peer, timeout);
        } catch (PeerTimeoutException e) {
            // As a data wait's timeout: its handler says which rank stopped answering before the peers see this go.
            throw giveUp(e);
        } catch (RuntimeException e) {
            RuntimeException first = failure.get();
            throw first != null ? first : fail(e);
        }
        try {
            ch.configureBlocking(false);
            keys[peer] = ch.register(selector, 0);
        } catch (IOException | RuntimeException e) {
            closeQuietly(ch);
            RuntimeException first = failure.get();
            throw first != null ? first : fail(new KoloException("rank " + rank + " could not use its connection to"
                    + " rank " + peer + ": " + e.getMessage(), e));
        }
        channels[peer] = ch;
        return ch;
    }

    private static void closeQuietly(SocketChannel ch) {
        try {
            ch.close();
        } catch (IOException e) {
            LOG.log(System.Logger.Level.DEBUG, "closing a data channel failed", e);
        }
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
        connections.close();
        closeAll(channels);
        selector.wakeup();
        try {
            selector.close();
        } catch (IOException e) {
            LOG.log(System.Logger.Level.DEBUG, "closing the selector failed", e);
        }
    }

    static void closeAll(SocketChannel[] channels) {
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

    /** Carries the receive side's peer out of the transfer loop. */
    private static final class TcpPeerIOException extends IOException {
        private static final long serialVersionUID = 1L;
        final int peer;

        TcpPeerIOException(int peer, IOException cause) {
            super(cause);
            this.peer = peer;
        }
    }

    @Override
    public String toString() {
        return "TcpTransport[rank " + rank + " of " + size + "]";
    }
}
