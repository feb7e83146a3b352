package io.kolo.launcher.start;

import java.io.FilterInputStream;
import java.io.IOException;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.time.Duration;

/**
 * A socket's input while its peer has not proved itself: every read waits only until one deadline for the whole
 * handshake, not a timeout per read, so a peer that trickles bytes cannot hold the connection. Lifted once the peer
 * has proved itself.
 */
final class HandshakeInput extends FilterInputStream {
    private final Socket socket;
    private final long deadline;
    private boolean lifted;

    HandshakeInput(Socket socket, Duration handshake) throws IOException {
        super(socket.getInputStream());
        this.socket = socket;
        this.deadline = System.nanoTime() + handshake.toNanos();
    }

    /** The peer proved itself: reads wait up to {@code readTimeoutMillis} each from now on. */
    void lift(int readTimeoutMillis) throws IOException {
        lifted = true;
        socket.setSoTimeout(readTimeoutMillis);
    }

    @Override
    public int read() throws IOException {
        beforeRead();
        return super.read();
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
        beforeRead();
        return super.read(b, off, len);
    }

    private void beforeRead() throws IOException {
        if (lifted) {
            return;
        }
        long leftMillis = (deadline - System.nanoTime()) / 1_000_000;
        if (leftMillis <= 0) {
            throw new SocketTimeoutException("the handshake did not finish in time");
        }
        socket.setSoTimeout((int) Math.min(Integer.MAX_VALUE, leftMillis));
    }

    @Override
    public long skip(long n) throws IOException {
        beforeRead();
        return super.skip(n);
    }
}
