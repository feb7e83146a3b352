package io.kolo.transport;

import io.kolo.KoloException;
import io.kolo.KoloTimeoutException;

import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A {@link Transport} for ranks that are threads of one JVM, used by tests and single-process jobs.
 *
 * <p>Messages are handed over without an intermediate copy: a sender posts a descriptor of its bytes in a
 * slot owned by the (sender, receiver) pair and blocks until the receiver has copied them out. Like a
 * socket, a pair behaves as an ordered byte stream, so a receive may consume a posted message in pieces.
 * {@link #abort} and {@link #close} act like tearing down a connection: peers blocked on this rank fail
 * promptly with {@link PeerFailedException}.
 *
 * <p>Because the receiving thread copies straight out of the sender's segment, segments passed to this transport
 * must be accessible from other threads: heap, global, automatic or shared-arena segments, not confined ones.
 *
 * <pre>{@code
 * List<Transport> ranks = LocalTransport.group(4, Duration.ofSeconds(30));
 * // hand ranks.get(r) to the thread that plays rank r
 * }</pre>
 */
public final class LocalTransport implements Transport {

    /** One directed pair's mailbox. All fields are guarded by {@link #lock}. */
    private static final class Slot {
        final ReentrantLock lock = new ReentrantLock();
        final Condition changed = lock.newCondition();
        MemorySegment segment;
        long offset;
        long length;
        long consumed;
        boolean posted;
    }

    /** State shared by the transports of one group. */
    private static final class Group {
        final int size;
        final long timeoutNanos;
        final String timeoutText;
        /** slots[from][to]. */
        final Slot[][] slots;
        final LocalTransport[] members;

        Group(int size, Duration timeout) {
            this.size = size;
            this.timeoutNanos = timeout.toNanos();
            this.timeoutText = io.kolo.bootstrap.Durations.describe(timeout);
            this.slots = new Slot[size][size];
            for (int i = 0; i < size; i++) {
                for (int j = 0; j < size; j++) {
                    slots[i][j] = new Slot();
                }
            }
            this.members = new LocalTransport[size];
        }
    }

    private final Group group;
    private final int rank;
    /** Why this rank stopped: set once by abort or close; read by its own calls and by peers. */
    private volatile RuntimeException failure;
    private volatile boolean closed;

    private LocalTransport(Group group, int rank) {
        this.group = group;
        this.rank = rank;
    }

    /**
     * Creates {@code size} connected transports; element {@code r} is rank {@code r}.
     *
     * @param timeout how long any single blocking wait may last before {@link KoloTimeoutException}
     */
    public static List<Transport> group(int size, Duration timeout) {
        if (size < 1) {
            throw new IllegalArgumentException("size must be >= 1, got " + size);
        }
        Objects.requireNonNull(timeout, "timeout");
        if (timeout.isNegative() || timeout.isZero()) {
            throw new IllegalArgumentException("timeout must be positive, got " + timeout);
        }
        Group g = new Group(size, timeout);
        List<Transport> result = new ArrayList<>(size);
        for (int r = 0; r < size; r++) {
            g.members[r] = new LocalTransport(g, r);
            result.add(g.members[r]);
        }
        return List.copyOf(result);
    }

    @Override
    public int rank() {
        return rank;
    }

    @Override
    public int size() {
        return group.size;
    }

    @Override
    public void send(int peer, MemorySegment src, long offset, long length) {
        checkPeer(peer);
        checkUsable();
        if (length == 0) {
            return;
        }
        Slot slot = post(peer, src, offset, length);
        awaitConsumed(peer, slot, System.nanoTime() + group.timeoutNanos);
    }

    @Override
    public void recv(int peer, MemorySegment dst, long offset, long length) {
        checkPeer(peer);
        checkUsable();
        receive(peer, dst, offset, length, System.nanoTime() + group.timeoutNanos);
    }

    @Override
    public void sendRecv(int sendPeer, MemorySegment src, long srcOffset, long srcLength,
                         int recvPeer, MemorySegment dst, long dstOffset, long dstLength) {
        checkPeer(sendPeer);
        checkPeer(recvPeer);
        checkUsable();
        // Posting before receiving is what keeps rings deadlock-free: every rank's outgoing bytes are
        // visible before anyone blocks on its incoming bytes.
        Slot slot = srcLength == 0 ? null : post(sendPeer, src, srcOffset, srcLength);
        try {
            receive(recvPeer, dst, dstOffset, dstLength, System.nanoTime() + group.timeoutNanos);
        } catch (RuntimeException e) {
            if (slot != null) {
                withdraw(slot);
            }
            throw e;
        }
        if (slot != null) {
            awaitConsumed(sendPeer, slot, System.nanoTime() + group.timeoutNanos);
        }
    }

    @Override
    public void abort(RuntimeException cause) {
        Objects.requireNonNull(cause, "cause");
        if (failure == null) {
            failure = cause;
        }
        wakeAll();
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        wakeAll();
    }

    @Override
    public String toString() {
        return "LocalTransport[rank " + rank + " of " + group.size + "]";
    }

    private Slot post(int peer, MemorySegment src, long offset, long length) {
        Objects.checkFromIndexSize(offset, length, src.byteSize());
        Slot slot = group.slots[rank][peer];
        slot.lock.lock();
        try {
            slot.segment = src;
            slot.offset = offset;
            slot.length = length;
            slot.consumed = 0;
            slot.posted = true;
            slot.changed.signalAll();
        } finally {
            slot.lock.unlock();
        }
        return slot;
    }

    /** Retracts a posted send after a failure, so the peer never reads a buffer its owner has given up. */
    private static void withdraw(Slot slot) {
        slot.lock.lock();
        try {
            slot.posted = false;
            slot.segment = null;
            slot.changed.signalAll();
        } finally {
            slot.lock.unlock();
        }
    }

    private void awaitConsumed(int peer, Slot slot, long deadline) {
        slot.lock.lock();
        try {
            while (slot.posted) {
                RuntimeException problem = problem(peer);
                if (problem == null && !awaitUntil(slot.changed, deadline)) {
                    problem = new KoloTimeoutException("timed out after " + group.timeoutText
                            + " waiting for rank " + peer + " to receive " + (slot.length - slot.consumed)
                            + " of " + slot.length + " bytes from rank " + rank
                            + " (is rank " + peer + " stuck or running a different collective?)");
                }
                if (problem != null) {
                    slot.posted = false;
                    slot.segment = null;
                    slot.changed.signalAll();
                    throw problem;
                }
            }
        } finally {
            slot.lock.unlock();
        }
    }

    private void receive(int peer, MemorySegment dst, long offset, long length, long deadline) {
        Objects.checkFromIndexSize(offset, length, dst.byteSize());
        if (length == 0) {
            return;
        }
        Slot slot = group.slots[peer][rank];
        long done = 0;
        slot.lock.lock();
        try {
            while (done < length) {
                if (slot.posted) {
                    long n = Math.min(length - done, slot.length - slot.consumed);
                    MemorySegment.copy(slot.segment, slot.offset + slot.consumed, dst, offset + done, n);
                    slot.consumed += n;
                    done += n;
                    if (slot.consumed == slot.length) {
                        slot.posted = false;
                        slot.segment = null;
                        slot.changed.signalAll();
                    }
                    continue;
                }
                RuntimeException problem = problem(peer);
                if (problem == null && !awaitUntil(slot.changed, deadline)) {
                    problem = new KoloTimeoutException("timed out after " + group.timeoutText
                            + " waiting for rank " + peer + " to send " + (length - done) + " of " + length
                            + " bytes to rank " + rank
                            + " (is rank " + peer + " stuck or running a different collective?)");
                }
                if (problem != null) {
                    throw problem;
                }
            }
        } finally {
            slot.lock.unlock();
        }
    }

    /** Returns the reason a wait on {@code peer} must stop, or null to keep waiting. */
    private RuntimeException problem(int peer) {
        RuntimeException own = failure;
        if (own != null) {
            return own;
        }
        if (closed) {
            return new KoloException("rank " + rank + ": transport is closed");
        }
        LocalTransport other = group.members[peer];
        RuntimeException theirs = other.failure;
        if (theirs != null) {
            return new PeerFailedException(peer, "rank " + peer + " aborted: " + theirs.getMessage(), theirs,
                    true);
        }
        if (other.closed) {
            return new PeerFailedException(peer, "rank " + peer + " closed its transport", null);
        }
        return null;
    }

    private void checkUsable() {
        RuntimeException own = failure;
        if (own != null) {
            throw own;
        }
        if (closed) {
            throw new KoloException("rank " + rank + ": transport is closed");
        }
    }

    private void checkPeer(int peer) {
        if (peer < 0 || peer >= group.size) {
            throw new IllegalArgumentException("peer " + peer + " out of range [0, " + group.size + ")");
        }
    }

    /** Wakes every wait that involves this rank, in either direction, so it re-checks for failure. */
    private void wakeAll() {
        for (int p = 0; p < group.size; p++) {
            signal(group.slots[rank][p]);
            signal(group.slots[p][rank]);
        }
    }

    private static void signal(Slot slot) {
        slot.lock.lock();
        try {
            slot.changed.signalAll();
        } finally {
            slot.lock.unlock();
        }
    }

    /** Returns false once the deadline has passed. */
    private static boolean awaitUntil(Condition condition, long deadline) {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
            return false;
        }
        try {
            condition.awaitNanos(left);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new KoloException("interrupted while waiting on the local transport", e);
        }
        return true;
    }
}
