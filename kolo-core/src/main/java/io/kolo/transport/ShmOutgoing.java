package io.kolo.transport;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * The message this rank is sending, one per transport and reused for every call (so a call allocates nothing): a
 * header when the pair reads directly, then the bytes through the ring in {@link ShmTransport#CHUNK}-sized pieces, or
 * (single copy) only the header with the address, after which the call waits until the receiver has read it.
 */
final class ShmOutgoing {
    private final ShmRings rings;
    private final ShmFile[] peerFiles;
    private final boolean[] readBy;
    /** Direct sends to each peer so far: the count its {@link ShmRing#directReads()} must reach. */
    private final long[] directSends;
    /** Non-null with {@link ShmTransport.SingleCopy#AUTO}: picks the way of each large native message. */
    private final CopyChoice choice;
    private final MemorySegment header;

    private int peer = -1;
    /** The ring to {@link #peer}; null until the peer has set it up (its first receive from this rank). */
    private ShmRing ring;
    private MemorySegment seg;
    private long off;
    private long left;
    private long total;
    private long headerLeft;
    private boolean direct;
    /** Whether this message took part in the choice, so its time is recorded. */
    private boolean timed;
    private long startNanos;
    private boolean awaitingRead;
    private long readTarget;
    /** The message goes as one slot ({@link ShmRing#offerSlot}); the receiver decides alike from the length. */
    private boolean slot;

    ShmOutgoing(ShmRings rings, ShmFile[] peerFiles, boolean[] readBy, CopyChoice choice, MemorySegment header) {
        this.rings = rings;
        this.peerFiles = peerFiles;
        this.readBy = readBy;
        this.directSends = new long[peerFiles.length];
        this.choice = choice;
        this.header = header;
    }

    /** Starts the call's message to {@code peer}; {@code peer} -1 when the call sends nothing. */
    void begin(int peer, MemorySegment seg, long offset, long length) {
        this.peer = peer;
        this.ring = peer >= 0 ? rings.sendTo(peer) : null;
        this.seg = seg;
        this.off = offset;
        this.left = length;
        this.total = length;
        headerLeft = 0;
        direct = false;
        timed = false;
        awaitingRead = false;
        slot = peer >= 0 && ShmWire.slot(length);
        if (peer >= 0 && length >= ShmWire.DIRECT_MIN_BYTES && readBy[peer]) {
            // Both sides know the length and the pair's ability, so both know a header comes. Heap memory has no
            // fixed address for the receiver to read: it goes through the ring behind an inline header.
            timed = choice != null && seg.isNative();
            if (timed) {
                startNanos = System.nanoTime();
            }
            direct = seg.isNative() && (!timed || choice.direct(length, startNanos));
            header.set(ValueLayout.JAVA_LONG, 0, direct ? ShmWire.HEADER_DIRECT : ShmWire.HEADER_INLINE);
            header.set(ValueLayout.JAVA_LONG, 8, direct ? seg.address() + offset : 0);
            headerLeft = ShmWire.HEADER_BYTES;
        }
    }

    /** Whether anything is left to send, or the call waits for the receiver to finish reading this rank's memory. */
    boolean active() {
        return headerLeft > 0 || left > 0 || awaitingRead;
    }

    int peer() {
        return peer;
    }

    /** The message's length. */
    long total() {
        return total;
    }

    /** Its bytes not moved yet. */
    long left() {
        return left;
    }

    /** The call is over: let go of the caller's memory, and record the time when this message's way was chosen. */
    void end(boolean completed) {
        if (completed && timed) {
            choice.record(total, System.nanoTime() - startNanos);
        }
        timed = false;
        seg = null;
        ring = null;
    }

    /** One attempt; true if anything moved. */
    boolean step() {
        if (ring == null && (!active() || (ring = rings.sendTo(peer)) == null)) {
            return false;
        }
        if (headerLeft > 0) {
            long n = ring.offer(header, ShmWire.HEADER_BYTES - headerLeft, headerLeft);
            if (n <= 0) {
                return false;
            }
            headerLeft -= n;
            peerFiles[peer].ringBell();
            if (headerLeft == 0 && direct) {
                off += left;
                left = 0;
                awaitingRead = true;
                readTarget = ++directSends[peer];
            }
            return true;
        }
        if (awaitingRead) {
            if (ring.directReads() >= readTarget) {
                awaitingRead = false;
                return true;
            }
            return false;
        }
        if (slot && left > 0) {
            if (ring.offerSlot(seg, off, left) == 0) {
                return false;
            }
            off += left;
            left = 0;
            peerFiles[peer].ringBell();
            return true;
        }
        if (left > 0) {
            long n = ring.offer(seg, off, Math.min(left, ShmWire.CHUNK));
            if (n > 0) {
                off += n;
                left -= n;
                peerFiles[peer].ringBell();
                return true;
            }
        }
        return false;
    }

    /** Whether a {@link #step} could move something now (re-checked after announcing a sleep). */
    boolean canProgress() {
        if (ring == null) {
            return active() && rings.canSendTo(peer);
        }
        if (headerLeft > 0 || left > 0) {
            // A slot may need padding to its line as well as the line itself.
            return ring.free() >= (slot ? ShmRing.SLOT_ROOM_BYTES : 1);
        }
        return awaitingRead && ring.directReads() >= readTarget;
    }

    /** What this side of the call waits for, for a timeout's message; empty when nothing. */
    String waitingFor() {
        if (awaitingRead) {
            return "for rank " + peer + " to read " + total + " bytes straight from this rank's memory";
        }
        if (ring == null && active()) {
            return "to send " + total + " bytes to rank " + peer + ", which has not set up its shared-memory ring for"
                    + " this rank (it has not yet received from this rank)";
        }
        if (headerLeft > 0 || left > 0) {
            return "to send " + total + " bytes to rank " + peer + " (" + (total - left) + " sent)";
        }
        return "";
    }
}
