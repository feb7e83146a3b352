package io.kolo.transport;

import io.kolo.bootstrap.ConnectionGate;
import io.kolo.bootstrap.Handshake;
import io.kolo.bootstrap.LazyLogger;
import io.kolo.bootstrap.ThreadLimit;

import java.io.Closeable;
import java.io.IOException;
import java.net.SocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;

/**
 * A rank's data-plane port: one thread accepts connections and runs every handshake on them without blocking, so a
 * rank accepting many peers starts no thread per connection and a silent stranger holds up nobody. Before a peer has
 * proved the job secret it costs a descriptor and a few hundred bytes at most: at most
 * {@link ConnectionGate#DEFAULT_MAX_UNAUTHENTICATED} of them at once (the oldest is dropped to make room), each for
 * the handshake's deadline at most. A peer that authenticated is handed on, blocking, to whoever waits for it.
 */
final class DataPortAcceptor implements Closeable {
    private static final System.Logger LOG = LazyLogger.of(DataPortAcceptor.class);

    private final ServerSocketChannel server;
    private final Selector selector;
    private final SelectionKey acceptKey;
    private final String purpose;
    private final io.kolo.launch.JobSecret secret;
    private final Handshake.ClaimCheck check;
    private final long handshakeNanos;
    private final ConnectionGate gate;
    private final String owner;
    /** Takes an authenticated connection and the claim it proved; called on the accepting thread. */
    private final BiConsumer<String, SocketChannel> authenticated;
    /**
     * Takes back a claim {@link #check} accepted whose connection failed before this end's proof left: the peer did
     * not authenticate this end, so it tries again, and must not find its claim taken.
     */
    private final java.util.function.Consumer<String> abandoned;
    /** Called on the accepting thread when accepting ran out of file descriptors. */
    private final Runnable outOfDescriptors;
    private volatile boolean closed;

    // Owned by the accepting thread.
    /** Handshakes in progress, oldest first (all have the same deadline, so the oldest expires first). */
    private final LinkedHashSet<Pending> pending = new LinkedHashSet<>();
    private final List<Pending> done = new ArrayList<>();
    private long acceptResumesAt;

    DataPortAcceptor(ServerSocketChannel server, String owner, io.kolo.launch.JobSecret secret, String purpose,
                     long handshakeMillis, Handshake.ClaimCheck check, BiConsumer<String, SocketChannel> authenticated,
                     java.util.function.Consumer<String> abandoned, Runnable outOfDescriptors) throws IOException {
        this.server = server;
        this.secret = secret;
        this.purpose = purpose;
        this.check = check;
        this.handshakeNanos = TimeUnit.MILLISECONDS.toNanos(handshakeMillis);
        this.authenticated = authenticated;
        this.abandoned = abandoned;
        this.outOfDescriptors = outOfDescriptors;
        this.owner = owner;
        this.gate = new ConnectionGate(owner, ConnectionGate.DEFAULT_MAX_UNAUTHENTICATED, LOG);
        server.configureBlocking(false);
        this.selector = Selector.open();
        try {
            this.acceptKey = server.register(selector, SelectionKey.OP_ACCEPT);
        } catch (IOException | RuntimeException e) {
            selector.close();
            throw e;
        }
        // Loaded now: once descriptors have run out, loading a class fails as well.
        Pending.class.getName();
    }

    /** Starts the accepting thread. */
    void start(String threadName, String what) {
        // A platform thread, as in RendezvousServer: JVM exit waits for a virtual thread parked in the JDK's poller.
        ThreadLimit.start(Thread.ofPlatform().daemon().name(threadName), this::serve, what);
    }

    private void serve() {
        try {
            while (!closed) {
                try {
                    selector.select(this::ready, selectTimeoutMillis());
                    finishAuthenticated();
                    long now = System.nanoTime();
                    expire(now);
                    if (acceptResumesAt != 0 && now - acceptResumesAt >= 0 && acceptKey.isValid()) {
                        acceptResumesAt = 0;
                        acceptKey.interestOps(SelectionKey.OP_ACCEPT);
                    }
                } catch (IOException | RuntimeException e) {
                    if (!closed) {
                        LOG.log(System.Logger.Level.WARNING, "{0} hit {1}; accepting on", owner, e);
                    }
                }
            }
        } finally {
            for (Pending p : new ArrayList<>(pending)) {
                p.close();
            }
            for (Pending p : done) {
                closeQuietly(p.channel);
            }
            closeQuietly(selector);
        }
    }

    private long selectTimeoutMillis() {
        long next = pending.isEmpty() ? Long.MAX_VALUE : pending.getFirst().deadline;
        if (acceptResumesAt != 0) {
            next = pending.isEmpty() ? acceptResumesAt : Math.min(next, acceptResumesAt);
        }
        if (next == Long.MAX_VALUE) {
            return 0;
        }
        return Math.max(1, TimeUnit.NANOSECONDS.toMillis(next - System.nanoTime()) + 1);
    }

    private void ready(SelectionKey key) {
        if (key == acceptKey) {
            acceptAll();
            return;
        }
        Pending p = (Pending) key.attachment();
        try {
            if (key.isValid() && key.isWritable()) {
                p.flush();
            }
            if (key.isValid() && key.isReadable()) {
                p.read();
            }
        } catch (IOException | RuntimeException e) {
            if (!closed) {
                gate.rejected(p.remote, e.getMessage());
            }
            p.close();
        }
    }

    private void acceptAll() {
        while (!closed) {
            SocketChannel ch;
            try {
                ch = server.accept();
                if (ch == null) {
                    return;
                }
            } catch (IOException | RuntimeException e) {
                if (closed) {
                    return;
                }
                if (DescriptorLimit.exhausted(e)) {
                    outOfDescriptors.run();
                }
                // Stop accepting for a while instead of spinning on the error; the gate gives a descriptor back.
                long pause = gate.acceptFailedPause(e);
                acceptKey.interestOps(0);
                acceptResumesAt = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(pause);
                return;
            }
            try {
                ch.configureBlocking(false);
                Pending p = new Pending(ch);
                p.key = ch.register(selector, SelectionKey.OP_READ, p);
                pending.add(p);
                gate.arrived(p);
            } catch (IOException | RuntimeException e) {
                closeQuietly(ch);
            }
        }
    }

    private void expire(long now) {
        while (!pending.isEmpty()) {
            Pending p = pending.getFirst();
            if (now - p.deadline < 0) {
                return;
            }
            gate.rejected(p.remote, "the handshake did not finish within "
                    + TimeUnit.NANOSECONDS.toSeconds(handshakeNanos) + " s");
            p.close();
        }
    }

    /** Hands on the connections that authenticated, blocking again now that the selector let go of them. */
    private void finishAuthenticated() throws IOException {
        while (!done.isEmpty()) {
            List<Pending> finished = new ArrayList<>(done);
            done.clear();
            // Their keys were cancelled; a channel stays registered until the selector's next select, which serves
            // whatever else is ready meanwhile (a handshake that finishes there is handed on in the next turn).
            selector.selectNow(this::ready);
            for (Pending p : finished) {
                try {
                    p.channel.configureBlocking(true);
                    authenticated.accept(p.side.claim(), p.channel);
                } catch (IOException | RuntimeException e) {
                    closeQuietly(p.channel);
                }
            }
        }
    }

    /** Stops accepting and drops every handshake in progress; the accepting thread ends. Idempotent. */
    @Override
    public void close() {
        closed = true;
        closeQuietly(server);
        selector.wakeup();
    }

    /** A connection in its handshake. */
    private final class Pending implements Closeable {
        final SocketChannel channel;
        final SocketAddress remote;
        final Handshake.ServerSide side = new Handshake.ServerSide(secret, purpose, check);
        final long deadline = System.nanoTime() + handshakeNanos;
        /** What the peer sent and the handshake did not consume yet: never more than a handshake's bytes. */
        final ByteBuffer in = ByteBuffer.allocate(Handshake.ServerSide.MAX_CLIENT_BYTES);
        ByteBuffer out;
        SelectionKey key;

        Pending(SocketChannel channel) throws IOException {
            this.channel = channel;
            this.remote = channel.getRemoteAddress();
        }

        void read() throws IOException {
            if (channel.read(in) < 0) {
                gate.rejected(remote, "closed the connection during " + side.reading());
                close();
                return;
            }
            in.flip();
            try {
                while (side.wanted() > 0 && in.remaining() >= side.wanted()) {
                    byte[] step = new byte[side.wanted()];
                    in.get(step);
                    byte[] reply = side.take(step);
                    if (reply != null) {
                        send(reply);
                    }
                }
            } catch (Handshake.Rejected e) {
                gate.rejected(remote, e.getMessage());
                close();
                return;
            } finally {
                in.compact();
            }
            finishIfDone();
        }

        private void send(byte[] reply) throws IOException {
            ByteBuffer b = ByteBuffer.wrap(reply);
            if (out != null && out.hasRemaining()) {
                ByteBuffer both = ByteBuffer.allocate(out.remaining() + b.remaining());
                both.put(out).put(b).flip();
                b = both;
            }
            out = b;
            flush();
        }

        void flush() throws IOException {
            if (out != null) {
                channel.write(out);
            }
            boolean waiting = out != null && out.hasRemaining();
            if (key.isValid()) {
                key.interestOps(waiting ? SelectionKey.OP_WRITE : SelectionKey.OP_READ);
            }
            finishIfDone();
        }

        private void finishIfDone() {
            if (side.done() && (out == null || !out.hasRemaining()) && pending.remove(this)) {
                gate.settled(this);
                key.cancel();
                done.add(this);
            }
        }

        /** Drops the connection (the gate makes room, its deadline passed, it failed). */
        @Override
        public void close() {
            boolean wasPending = pending.remove(this);
            gate.settled(this);
            closeQuietly(channel);
            if (wasPending && side.done()) {
                abandoned.accept(side.claim());
            }
        }
    }

    private static void closeQuietly(Closeable c) {
        try {
            c.close();
        } catch (IOException e) {
            LOG.log(System.Logger.Level.DEBUG, "closing failed", e);
        }
    }
}
