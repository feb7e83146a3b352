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
 * A {@link Transport} over a full mesh of TCP connections, one per pair of ranks.
 *
 * <p>Every connection is authenticated with the job secret ({@link Handshake}, purpose {@code "data"})
 * before any byte of it is used; strangers are logged and dropped. The listening socket is closed as soon
 * as the mesh is complete, so no data port stays open. A lost connection, a timeout or {@link #abort}
 * leaves the transport dead: every later call fails at once with the first failure.
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
                    lastProgress = System.nanoTime();
                } else if (!backoff.idle()) {
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
        return new KoloTimeoutException("rank " + rank + " timed out after " + io.kolo.bootstrap.Durations.describe(timeout) + " waiting "
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
