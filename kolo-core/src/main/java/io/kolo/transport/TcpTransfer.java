package io.kolo.transport;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;

/**
 * One direction (send or receive) of an in-flight transfer over a non-blocking channel. Reused for every
 * call so the steady-state data path allocates nothing: it keeps the ByteBuffer view of the last native
 * segment seen, and a direct staging buffer for heap segments and segments over 2 GiB.
 */
final class TcpTransfer {
    static final int STAGING_BYTES = 1 << 20;

    private final boolean sending;
    private MemorySegment cachedSegment;
    private ByteBuffer cachedView; // null when cachedSegment can't be viewed
    private ByteBuffer staging;
    private MemorySegment stagingSegment;

    // The transfer in progress.
    int peer = -1;
    SocketChannel channel;
    private MemorySegment segment;
    private ByteBuffer buffer;
    private long position; // next segment offset to stage (send) or fill (receive)
    private long remaining;
    private long total;

    TcpTransfer(boolean sending) {
        this.sending = sending;
    }

    void begin(int peer, SocketChannel channel, MemorySegment segment, long offset, long length) {
        this.peer = peer;
        this.channel = channel;
        this.segment = segment;
        this.position = offset;
        this.remaining = length;
        this.total = length;
        if (length == 0) {
            return;
        }
        // Heap segments, byte[] ones included, always go through our staging buffer: the JDK would copy a
        // heap ByteBuffer into a per-thread temporary direct buffer as large as the whole message and keep
        // it cached, so a 1 GiB byte[] would pin 1 GiB of native memory per thread. Heap segments also
        // leave the native view cache alone, so alternating heap and native buffers stays allocation-free.
        ByteBuffer view = null;
        if (segment.isNative()) {
            if (segment != cachedSegment) {
                cachedSegment = segment;
                try {
                    cachedView = segment.asByteBuffer();
                } catch (UnsupportedOperationException e) {
                    // Over 2 GiB: no ByteBuffer can address it; stage it in chunks instead.
                    cachedView = null;
                }
            }
            view = cachedView;
        }
        if (view != null) {
            buffer = view;
            // Limit before position: the new position may lie beyond the old limit.
            buffer.limit(Math.toIntExact(offset + length));
            buffer.position(Math.toIntExact(offset));
        } else {
            if (staging == null) {
                staging = ByteBuffer.allocateDirect(STAGING_BYTES);
                stagingSegment = MemorySegment.ofBuffer(staging);
            }
            buffer = staging;
            // Empty: the first step stages (send) or reads into it (receive).
            buffer.clear().limit(0);
        }
    }

    boolean done() {
        return remaining == 0;
    }

    long remaining() {
        return remaining;
    }

    long total() {
        return total;
    }

    /** Moves what the socket takes or gives now; returns the bytes moved, or -1 at end of stream. */
    long step() throws IOException {
        if (remaining == 0) {
            return 0;
        }
        return sending ? stepSend() : stepReceive();
    }

    private long stepSend() throws IOException {
        if (buffer == staging && !buffer.hasRemaining()) {
            int chunk = (int) Math.min(remaining, STAGING_BYTES);
            MemorySegment.copy(segment, position, stagingSegment, 0, chunk);
            position += chunk;
            buffer.clear().limit(chunk);
        }
        int n = channel.write(buffer);
        remaining -= n;
        return n;
    }

    private long stepReceive() throws IOException {
        if (buffer == staging) {
            buffer.clear().limit((int) Math.min(remaining, STAGING_BYTES));
            int n = channel.read(buffer);
            if (n > 0) {
                MemorySegment.copy(stagingSegment, 0, segment, position, n);
                position += n;
                remaining -= n;
            }
            return n;
        }
        int n = channel.read(buffer);
        if (n > 0) {
            remaining -= n;
        }
        return n;
    }

    /** Drops the references to the caller's segment and channel of the finished transfer. */
    void finish() {
        segment = null;
        channel = null;
    }
}
