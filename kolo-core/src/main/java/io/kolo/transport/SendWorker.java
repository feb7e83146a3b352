package io.kolo.transport;

import io.kolo.KoloException;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.locks.LockSupport;

/**
 * A thread that runs one blocking {@link Transport#send} at a time for its owner, so the owner can receive on another
 * transport meanwhile. Hand-over is through fields and park/unpark: nothing is allocated per send.
 */
final class SendWorker implements AutoCloseable {
    private static final int IDLE = 0;
    private static final int POSTED = 1;
    private static final int DONE = 2;

    private final Thread thread;
    private volatile Thread owner;
    private volatile int state = IDLE;
    private volatile boolean closed;
    /** The owner's wait for its posted send: spin (a send usually finishes within microseconds), then park. */
    private final Backoff waiting = new Backoff(999, 0, 0);
    private Transport transport;
    private int peer;
    private MemorySegment src;
    private long offset;
    private long length;
    private RuntimeException failure;

    SendWorker(String name) {
        thread = Thread.ofPlatform().daemon().name(name).start(this::loop);
    }

    void post(Transport transport, int peer, MemorySegment src, long offset, long length) {
        this.transport = transport;
        this.peer = peer;
        this.src = src;
        this.offset = offset;
        this.length = length;
        this.failure = null;
        this.owner = Thread.currentThread();
        state = POSTED; // volatile write publishes the fields above
        LockSupport.unpark(thread);
    }

    /** Waits for the posted send; returns its failure, or null. The send itself is bounded by its transport's timeout. */
    RuntimeException await() {
        waiting.reset();
        while (state != DONE) {
            if (!waiting.idle()) {
                LockSupport.parkNanos(this, 50_000);
            }
        }
        state = IDLE;
        src = null;
        return failure;
    }

    void awaitQuietly() {
        await();
    }

    private void loop() {
        while (!closed) {
            if (state != POSTED) {
                LockSupport.park(this);
                continue;
            }
            try {
                transport.send(peer, src, offset, length);
            } catch (RuntimeException e) {
                failure = e;
            } catch (Error e) {
                failure = new KoloException("the send to rank " + peer + " failed: " + e, e);
            }
            state = DONE;
            LockSupport.unpark(owner);
        }
    }

    @Override
    public void close() {
        closed = true;
        LockSupport.unpark(thread);
    }
}
