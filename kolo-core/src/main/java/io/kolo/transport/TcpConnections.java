package io.kolo.transport;

import io.kolo.KoloException;
import io.kolo.KoloTimeoutException;
import io.kolo.bootstrap.Handshake;
import io.kolo.bootstrap.KeyValueStore;
import io.kolo.bootstrap.LazyLogger;
import io.kolo.bootstrap.StartWait;
import io.kolo.bootstrap.StoreKeys;
import io.kolo.launch.JobSecret;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.net.UnknownHostException;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.StringJoiner;
import java.util.concurrent.TimeUnit;

/**
 * A rank's TCP connections, each opened when the transport first exchanges with its peer: a job whose algorithms talk
 * to a few peers (a ring, recursive doubling) holds a few connections per rank, not one per other rank. Both sides
 * agree without a word: of a pair, the higher rank connects and the lower one accepts, each when it first needs the
 * other. At start a rank only opens its port, publishes its address and reads every other rank's in one request.
 * Separate from {@link TcpTransport} so that the data path carries none of this state.
 */
final class TcpConnections implements AutoCloseable {
    private static final System.Logger LOG = LazyLogger.of(TcpConnections.class);
    private static final String PURPOSE = "data";
    /** The whole handshake of one connection, at most: real peers need milliseconds. */
    private static final long HANDSHAKE_MILLIS = 10_000;
    private static final long MAX_BACKOFF_MILLIS = 250;
    /**
     * How often a wait for a peer's connection, or attempts to connect to it, ask the store whether the job can still
     * form (an elastic launcher replaced it after a peer died: {@link KeyValueStore#checkStillForming}).
     */
    private static final long CHECK_MILLIS = 500;
    /** Loads and initialises it now: once descriptors have run out, loading a class fails as well. */
    private static final boolean DESCRIPTORS_EXPLAINED = !DescriptorLimit.exhausted(null);
    /**
     * One connect attempt at most, so that attempts to reach a peer whose host went silent (no refusal) still ask the
     * store now and then; long enough for any real network's round trip.
     */
    private static final long CONNECT_ATTEMPT_MILLIS = 3000;
    private final int rank;
    private final int size;
    private final InetAddress bindAddress;
    private final KeyValueStore store;
    private final JobSecret secret;
    private final Duration startTimeout;
    private final long deadline;
    /** Higher ranks whose claim was taken, as it is checked: one connection per rank, ever. Owned by the acceptor. */
    private final boolean[] claimed;
    /** Those of them that passed the handshake, until the transport takes them; guarded by itself. */
    private final SocketChannel[] ready;
    /**
     * Every rank's published address as the store gave it, parsed when this rank first connects to that peer: a rank
     * of a large job connects to a few peers, and parsing all n addresses in each of n ranks (one JVM) was n² work.
     */
    private List<String> addresses;
    /** Peers connected so far; once every one has, the port closes. */
    private int opened;
    private volatile boolean finished;
    /** Set when accepting ran out of file descriptors: the ranks still to connect never will, so start fails now. */
    private volatile boolean acceptOutOfDescriptors;
    private ServerSocketChannel server;
    private DataPortAcceptor acceptor;

    TcpConnections(int rank, int size, InetAddress bindAddress, KeyValueStore store, JobSecret secret,
                   Duration startTimeout) {
        this.rank = rank;
        this.size = size;
        this.bindAddress = bindAddress;
        this.store = store;
        this.secret = secret;
        this.startTimeout = startTimeout;
        this.deadline = System.nanoTime() + startTimeout.toNanos();
        this.claimed = new boolean[size];
        this.ready = new SocketChannel[size];
    }

    /**
     * Opens this rank's port, publishes its address and reads every other rank's: no connection yet.
     *
     * @throws KoloTimeoutException naming every rank that did not publish its address within the start timeout
     */
    void start() {
        boolean ok = false;
        try {
            if (size > 1) {
                listen();
                store.put(StoreKeys.address(rank), DataPlaneAddress.format(publishedAddress(), server.socket().getLocalPort()));
                addresses = lookUpPeers();
            }
            ok = true;
        } catch (IOException e) {
            if (DescriptorLimit.exhausted(e)) {
                throw new KoloException(DescriptorLimit.explain(rank, size), e);
            }
            throw new KoloException("rank " + rank + " could not open its data-plane port on "
                    + bindAddress.getHostAddress() + ": " + e.getMessage(), e);
        } finally {
            if (!ok) {
                close();
            }
        }
    }

    /**
     * The connection to {@code peer}, authenticated: connects to a lower rank, or waits for a higher one to connect
     * (it does when it first exchanges with this rank). Called once per peer, by the transport's one caller at a time,
     * which opens its connections to lower ranks before it waits for higher ones, so that two ranks never wait for
     * each other.
     *
     * @param timeout how long the peer may take to connect, or to be reached
     * @throws PeerTimeoutException naming the peer when it does not connect, or cannot be reached, in time
     */
    SocketChannel open(int peer, Duration timeout) {
        SocketChannel ch;
        try {
            ch = peer < rank ? connectTo(peer, DataPlaneAddress.parse(peer, addresses.get(peer)), timeout)
                    : awaitHigherRank(peer, timeout);
        } catch (IOException e) {
            throw new KoloException(DescriptorLimit.explain(rank, size), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new KoloException("rank " + rank + " was interrupted while connecting to rank " + peer, e);
        }
        if (++opened == size - 1) {
            // Every peer is connected: no data port stays open.
            close();
        }
        return ch;
    }

    private void listen() throws IOException {
        server = ServerSocketChannel.open();
        // Set before bind so accepted sockets inherit it and window scaling is negotiated.
        server.setOption(StandardSocketOptions.SO_RCVBUF, TcpTransport.RECEIVE_BUFFER_BYTES);
        server.bind(new InetSocketAddress(bindAddress, 0), size + 16);
        acceptor = new DataPortAcceptor(server, "rank " + rank + "'s data-plane port", secret, PURPOSE,
                HANDSHAKE_MILLIS, this::checkClaim, this::authenticated,
                claim -> claimed[rankIn(claim)] = false, () -> acceptOutOfDescriptors = true);
        acceptor.start("kolo-tcp-accept-" + rank, "rank " + rank + "'s data-port acceptor");
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
                if (store.tryGet(StoreKeys.address(r)).isEmpty()) {
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

    /** Every rank's address, read from the store in one request whatever the job's size. */
    private List<String> lookUpPeers() {
        List<String> values;
        try {
            values = store.getEach(StoreKeys.ADDRESSES, size, remaining());
        } catch (KoloTimeoutException e) {
            // Name every rank still missing, not only the first one.
            throw StartWait.timedOut(rank, ranks(missingPeers(0)), startTimeout,
                    "to publish a data-plane address in the rendezvous store");
        } catch (io.kolo.bootstrap.GenerationReplacedException e) {
            throw e;   // the store is there; the job it waited in is over
        } catch (KoloException e) {
            // Usually the store's host (rank 0) hit its own start timeout first and exited: say what this
            // rank was waiting for, not only that the store vanished.
            throw StartWait.storeGone(rank, "the other ranks", "to publish their data-plane addresses", e);
        }
        return values;
    }

    /** @throws IOException only when descriptors ran out */
    private SocketChannel connectTo(int peer, InetSocketAddress address, Duration timeout)
            throws InterruptedException, IOException {
        long until = System.nanoTime() + timeout.toNanos();
        long backoff = 5;
        Exception last = null;
        long nextCheck = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(CHECK_MILLIS);
        while (true) {
            if (System.nanoTime() - nextCheck >= 0) {
                store.checkStillForming();
                nextCheck = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(CHECK_MILLIS);
            }
            long left = TimeUnit.NANOSECONDS.toMillis(until - System.nanoTime());
            if (left <= 0) {
                throw new PeerTimeoutException("rank " + rank + " timed out after " + io.kolo.bootstrap.Durations.describe(timeout)
                        + " connecting to rank " + peer + " at " + DataPlaneAddress.format(address.getAddress(), address.getPort())
                        + (last == null ? "" : " (last error: " + last.getMessage() + ")")
                        + "; check that the hosts can reach each other on KOLO_IFACE and share one KOLO_SECRET, or raise"
                        + " KOLO_TIMEOUT_SECONDS if rank " + peer + " legitimately takes this long",
                        new PeerWait(rank, peer, false, 0, 0, timeout.toNanos()));
            }
            SocketChannel ch = null;
            try {
                ch = SocketChannel.open();
                configure(ch);
                if (!bindAddress.isAnyLocalAddress()) {
                    // Leave through the chosen interface on multi-homed hosts.
                    ch.bind(new InetSocketAddress(bindAddress, 0));
                }
                ch.socket().connect(address, (int) Math.max(1, Math.min(left, CONNECT_ATTEMPT_MILLIS)));
                Handshake.client(ch.socket(), secret, PURPOSE, claim(rank, size, peer),
                        Duration.ofMillis(Math.max(1, Math.min(left, HANDSHAKE_MILLIS))));
                ch.socket().setSoTimeout(0);
                return ch;
            } catch (Handshake.Rejected e) {
                LOG.log(System.Logger.Level.WARNING, "rank {0}: the process at {1} (published as rank {2})"
                        + " failed the data-plane handshake: {3}", rank, address, peer, e.getMessage());
                last = e;
            } catch (IOException e) {
                if (DescriptorLimit.exhausted(e)) {
                    closeQuietly(ch);
                    throw e;
                }
                last = e;
            }
            closeQuietly(ch);
            Thread.sleep(Math.max(0, Math.min(backoff, TimeUnit.NANOSECONDS.toMillis(until - System.nanoTime()))));
            backoff = Math.min(backoff * 2, MAX_BACKOFF_MILLIS);
        }
    }

    private SocketChannel awaitHigherRank(int peer, Duration timeout) throws InterruptedException {
        long until = System.nanoTime() + timeout.toNanos();
        long nextCheck = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(CHECK_MILLIS);
        synchronized (ready) {
            while (ready[peer] == null) {
                long left = until - System.nanoTime();
                if (left <= 0) {
                    throw new PeerTimeoutException("rank " + rank + " timed out after "
                            + io.kolo.bootstrap.Durations.describe(timeout) + " waiting for rank " + peer
                            + " to connect to its data-plane port (it failed or stopped before its first exchange with"
                            + " this rank, cannot reach this host on KOLO_IFACE, or uses a different KOLO_SECRET); raise"
                            + " KOLO_TIMEOUT_SECONDS if it legitimately takes this long",
                            new PeerWait(rank, peer, true, 0, 0, timeout.toNanos()));
                }
                if (acceptOutOfDescriptors) {
                    throw new KoloException(DescriptorLimit.explain(rank, size));
                }
                if (finished) {
                    throw new KoloException("rank " + rank + ": the TCP transport was closed while waiting for rank "
                            + peer + " to connect");
                }
                if (System.nanoTime() - nextCheck >= 0) {
                    store.checkStillForming();
                    nextCheck = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(CHECK_MILLIS);
                }
                TimeUnit.NANOSECONDS.timedWait(ready, Math.min(left, TimeUnit.MILLISECONDS.toNanos(CHECK_MILLIS)));
            }
            SocketChannel ch = ready[peer];
            ready[peer] = null;
            return ch;
        }
    }

    /** What a connecting rank claims, and proves with the secret: its rank, the job's size, and whom it wants. */
    static String claim(int from, int size, int to) {
        return "rank " + from + " of " + size + " to rank " + to;
    }

    /** Takes the claimed rank before this end answers, so that the same rank can never be claimed twice. */
    private void checkClaim(String claim) throws Handshake.Rejected {
        int peer = claimedRank(claim);
        if (claimed[peer]) {
            throw Handshake.refuse("claims to be rank " + peer + ", which is already connected"
                    + " (a stale process of an earlier job with the same KOLO_SECRET?)");
        }
        claimed[peer] = true;
    }

    /** A higher rank that proved its claim: its connection waits for this rank's first exchange with it. */
    private void authenticated(String claim, SocketChannel ch) {
        int peer = rankIn(claim);
        try {
            configure(ch);
        } catch (IOException e) {
            LOG.log(System.Logger.Level.DEBUG, "configuring rank {0}'s connection failed", peer, e);
        }
        synchronized (ready) {
            if (finished) {
                // The transport is closed, or gave up: nobody will pick this channel up.
                closeQuietly(ch);
                return;
            }
            ready[peer] = ch;
            ready.notifyAll();
        }
    }

    /** The rank an authenticated claim names, if it is one that connects to this rank at all. */
    private int claimedRank(String claim) throws Handshake.Rejected {
        if (claim.equals(claim(rankIn(claim), size, rank)) && rankIn(claim) > rank && rankIn(claim) < size) {
            return rankIn(claim);
        }
        throw Handshake.refuse("an authenticated peer claims '" + claim + "', but this is rank " + rank + " of "
                + size + ", which only higher ranks of the same job connect to (are two jobs sharing a KOLO_SECRET?)");
    }

    private static int rankIn(String claim) {
        String[] words = claim.split(" ", 3);
        try {
            return words.length == 3 && words[0].equals("rank") ? Integer.parseInt(words[1]) : -1;
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    private static void configure(SocketChannel ch) throws IOException {
        ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
        ch.setOption(StandardSocketOptions.SO_SNDBUF, TcpTransport.SEND_BUFFER_BYTES);
        ch.setOption(StandardSocketOptions.SO_RCVBUF, TcpTransport.RECEIVE_BUFFER_BYTES);
    }

    private Duration remaining() {
        return Duration.ofNanos(Math.max(0, deadline - System.nanoTime()));
    }

    private static String ranks(List<Integer> missing) {
        if (missing.size() == 1) {
            return "rank " + missing.getFirst();
        }
        StringJoiner j = new StringJoiner(", ", "ranks ", "");
        missing.forEach(r -> j.add(String.valueOf(r)));
        return j.toString();
    }

    /**
     * Stops accepting (no data port stays open), drops unfinished handshakes and the accepted connections the
     * transport never took. Idempotent.
     */
    @Override
    public void close() {
        synchronized (ready) {
            finished = true;
            for (int peer = 0; peer < size; peer++) {
                closeQuietly(ready[peer]);
                ready[peer] = null;
            }
        }
        if (acceptor != null) {
            acceptor.close();
        } else if (server != null) {
            try {
                server.close();
            } catch (IOException e) {
                LOG.log(System.Logger.Level.DEBUG, "closing the data-plane listener failed", e);
            }
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
