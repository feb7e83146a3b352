package io.kolo.bootstrap;

import java.io.Closeable;
import java.io.IOException;
import java.net.SocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.util.ArrayDeque;
import java.util.List;
import java.util.Optional;

/**
 * One client's connection to the {@link RendezvousServer}, owned by its serving thread: its handshake until it
 * authenticates, then its requests, one at a time (a client waits for each answer, so a request is read only once
 * the one before is answered). A GET or GET_EACH whose keys are missing is parked in {@link ParkedRequests} until
 * they come or it times out.
 */
final class StoreConnection implements Closeable {
    private static final int FIRST_REQUEST_BUFFER = 4096;

    /** What every connection of one server shares; each piece is owned by the server or by itself. */
    record Shared(RendezvousServer server, ConnectionGate gate, InMemoryStore values, ParkedRequests parkedRequests,
                  EncodedTables encodedTables, RequestCounts counts, RateLimitedLog troubles) {
    }

    private final Shared shared;
    private final SocketChannel channel;
    private final SocketAddress remote;
    private SelectionKey key;
    /** The handshake in progress; null once the client authenticated. */
    private Handshake.ServerSide handshake;
    private final long handshakeDeadline;
    /** Bytes read and not yet consumed, in write mode; a handshake's bytes at most before it authenticates. */
    private ByteBuffer in = ByteBuffer.allocate(Handshake.ServerSide.MAX_CLIENT_BYTES);
    private final ArrayDeque<ByteBuffer> out = new ArrayDeque<>();
    private ParkedRequests.Parked parked;
    private boolean open = true;

    /** @param handshakeDeadline when the handshake must have finished, in the server's clock */
    StoreConnection(SocketChannel channel, Handshake.ServerSide handshake, long handshakeDeadline, Shared shared)
            throws IOException {
        this.channel = channel;
        this.remote = channel.getRemoteAddress();
        this.handshake = handshake;
        this.handshakeDeadline = handshakeDeadline;
        this.shared = shared;
    }

    void registered(SelectionKey key) {
        this.key = key;
    }

    SocketAddress remote() {
        return remote;
    }

    long handshakeDeadline() {
        return handshakeDeadline;
    }

    boolean isParked(ParkedRequests.Parked p) {
        return parked == p;
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
                shared.gate().rejected(remote, "closed the connection during the handshake");
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
            shared.gate().rejected(remote, e.getMessage());
            close(false);
            return;
        } finally {
            in.compact();
        }
        if (handshake.done()) {
            handshake = null;
            shared.server().handshakeOver(this);
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
            shared.counts().received(r.bytes());
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
        InMemoryStore values = shared.values();
        switch (r.op()) {
            case RendezvousProtocol.PUT -> {
                values.put(r.key(), r.value());
                reply(RendezvousProtocol.reply(RendezvousProtocol.OK));
            }
            case RendezvousProtocol.PUT_IF_ABSENT -> reply(RendezvousProtocol.reply(values.putIfAbsent(r.key(), r.value())
                    ? RendezvousProtocol.STORED : RendezvousProtocol.PRESENT));
            case RendezvousProtocol.TRY_GET -> replyValue(values.tryGet(r.key()));
            case RendezvousProtocol.GET, RendezvousProtocol.GET_EACH -> {
                parked = shared.parkedRequests().park(this, r);
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
        ParkedRequests.Parked p = parked;
        RendezvousProtocol.Request r = p.request;
        InMemoryStore values = shared.values();
        boolean each = r.op() == RendezvousProtocol.GET_EACH;
        ByteBuffer answer = null;
        if (each) {
            Optional<List<String>> found = values.tryGetEach(r.key(), r.count());
            if (found.isPresent()) {
                answer = shared.encodedTables().reply(r.key(), r.count(), found.get());
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
            Runnable wake = () -> shared.parkedRequests().wake(this);
            shared.parkedRequests().waiting(p, () -> each
                    ? values.whenEachPresent(r.key(), r.count(), wake) : values.whenPresent(r.key(), wake));
            return;
        }
        shared.parkedRequests().done(p);
        parked = null;
        try {
            reply(answer);
            serveRequests();
            setInterest();
        } catch (IOException | RuntimeException | Error e) {
            failed(e);
        }
    }

    /** The store called back: the parked request's keys may be there now. */
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
        shared.counts().answered(answer.remaining());
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
        if (open && !shared.server().isClosing() && !(e instanceof IOException io && isReset(io))) {
            shared.troubles().warn("dropping rendezvous connection from " + remote + ": " + e);
        }
        close(false);
    }

    private static boolean isReset(IOException e) {
        String m = String.valueOf(e.getMessage());
        return m.contains("reset") || m.contains("Broken pipe");
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
            shared.server().handshakeOver(this);
        }
        in = ByteBuffer.allocate(0);
        out.clear();
        if (parked != null) {
            shared.parkedRequests().done(parked);
            parked = null;
        }
        shared.server().dropped(this);
        try {
            if (reset) {
                // A reset, not an orderly close, tells a client dropped for room from one refused for its secret.
                channel.setOption(StandardSocketOptions.SO_LINGER, 0);
            }
        } catch (IOException | RuntimeException ignored) {
            // Closing anyway.
        }
        RendezvousServer.closeQuietly(channel);
    }
}
