package io.kolo.transport;

import io.kolo.KoloException;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.function.UnaryOperator;

/**
 * The message this rank is receiving, one per transport and reused for every call: a header when the pair reads
 * directly, then the bytes out of the ring, or (single copy) straight out of the sender's memory. With a combiner
 * (reduce-scatter steps) received bytes are combined into the destination instead of copied.
 */
final class ShmIncoming {
    private final int rank;
    private final ShmRings rings;
    private final ShmFile[] peerFiles;
    private final boolean[] readsFrom;
    /** Non-null when this process may read other processes' memory at all. */
    private final CrossMemory cross;
    private final ShmPeers peers;
    private final MemorySegment header;
    /** Gathers the one element that may wrap around a ring's end (the largest element has 8 bytes). */
    private final MemorySegment stash;
    /** Where directly read bytes land when they are combined, or when the destination is Java heap memory. */
    private final MemorySegment stage;
    /** Records a failure as the transport's first and returns the one to throw. */
    private final UnaryOperator<RuntimeException> fail;

    private int peer = -1;
    /** The ring from {@link #peer}. */
    private ShmRing ring;
    private MemorySegment seg;
    private long off;
    private long left;
    private long total;
    private long headerLeft;
    private Combiner combiner;
    private int unit;
    /** The message comes as one slot ({@link ShmRing#pollSlot}), as the sender decides from the same length. */
    private boolean slot;

    ShmIncoming(int rank, ShmLinks links, ShmRings rings, ShmPeers peers, MemorySegment header, MemorySegment stash,
                MemorySegment stage, UnaryOperator<RuntimeException> fail) {
        this.rank = rank;
        this.rings = rings;
        this.peerFiles = links.peerFiles();
        this.readsFrom = links.readsFrom();
        this.cross = links.cross();
        this.peers = peers;
        this.header = header;
        this.stash = stash;
        this.stage = stage;
        this.fail = fail;
    }

    /**
     * Starts the call's message from {@code peer}; {@code peer} -1 when the call receives nothing. The first message
     * from a peer sets up its ring ({@link ShmRings#receiveFrom}), which throws when shared memory is full.
     */
    void begin(int peer, MemorySegment seg, long offset, long length, Combiner combiner, int unit) {
        this.ring = peer >= 0 ? rings.receiveFrom(peer) : null;
        this.peer = peer;
        this.seg = seg;
        this.off = offset;
        this.left = length;
        this.total = length;
        this.combiner = combiner;
        this.unit = unit;
        headerLeft = peer >= 0 && length >= ShmWire.DIRECT_MIN_BYTES && readsFrom[peer]
                ? ShmWire.HEADER_BYTES : 0;
        slot = peer >= 0 && ShmWire.slot(length);
        if (slot && combiner != null) {
            // The transport combines in place only from ShmWire.COMBINE_IN_PLACE_MIN_BYTES, far above a slot.
            throw new IllegalStateException("a " + length + "-byte message cannot be combined in place");
        }
    }

    boolean active() {
        return headerLeft > 0 || left > 0;
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

    /** The call is over: let go of the caller's memory. */
    void end() {
        seg = null;
        ring = null;
        combiner = null;
    }

    /** One attempt; true if anything moved. */
    boolean step() {
        if (headerLeft > 0) {
            long n = ring.poll(header, ShmWire.HEADER_BYTES - headerLeft, headerLeft);
            if (n <= 0) {
                return false;
            }
            headerLeft -= n;
            peerFiles[peer].ringBell();
            if (headerLeft == 0) {
                long kind = header.get(ValueLayout.JAVA_LONG, 0);
                if (kind == ShmWire.HEADER_DIRECT) {
                    readDirect(header.get(ValueLayout.JAVA_LONG, 8));
                } else if (kind != ShmWire.HEADER_INLINE) {
                    throw fail.apply(new KoloException("rank " + rank + " received a message header it does not"
                            + " know from rank " + peer + " over shared memory (0x" + Long.toHexString(kind)
                            + "); do all ranks run the same Kolo version?"));
                }
            }
            return true;
        }
        if (slot && left > 0) {
            if (ring.pollSlot(seg, off, left) == 0) {
                return false;
            }
            off += left;
            left = 0;
            peerFiles[peer].ringBell();
            return true;
        }
        if (left > 0) {
            long n = combiner == null ? ring.poll(seg, off, Math.min(left, ShmWire.CHUNK))
                    : ring.pollCombine(seg, off, Math.min(left, ShmWire.CHUNK), unit, stash, combiner);
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
        if (headerLeft > 0) {
            return ring.available() > 0;
        }
        return left > 0 && ring.available() >= (combiner == null ? 1 : unit);
    }

    /**
     * Copies the whole incoming message out of the sender's memory at {@code address}, then tells the sender it may
     * reuse it. Straight into a native destination; through {@link #stage}, a piece at a time, into heap memory or
     * into the combiner.
     */
    private void readDirect(long address) {
        int pid = (int) peerFiles[peer].pid();
        long done = 0;
        while (done < left) {
            boolean straight = combiner == null && seg.isNative();
            long piece = straight ? left - done : Math.min(left - done, stage.byteSize());
            long n = straight ? cross.read(pid, address + done, seg, off + done, piece)
                    : cross.read(pid, address + done, stage, 0, piece);
            if (n != piece) {
                throw fail.apply(directReadFailed(n < 0 ? cross.lastErrno() : 0, n, piece));
            }
            if (!straight) {
                if (combiner != null) {
                    combiner.combine(seg, off + done, stage, 0, piece);
                } else {
                    MemorySegment.copy(stage, 0, seg, off + done, piece);
                }
            }
            done += piece;
        }
        off += left;
        left = 0;
        ring.directReadDone();
        peerFiles[peer].ringBell();
    }

    private RuntimeException directReadFailed(int errno, long got, long wanted) {
        PeerFailedException gone = peers.gone(peer, true, errno == CrossMemory.ESRCH);
        if (gone != null) {
            return gone;
        }
        if (errno == CrossMemory.EFAULT && seg.scope().isAlive()) {
            // Our side is mapped, so the sender's is not: not a fault of the kernel copy (KOLO_SHM_SINGLE_COPY=0 would
            // not help), but memory the sender freed while the op ran; its own failure names the op.
            return new KoloException("rank " + rank + " could not read " + wanted + " bytes from rank " + peer
                    + "'s memory (process_vm_readv: EFAULT): rank " + peer + " no longer has it mapped, as when a"
                    + " tensor's memory is freed (its Arena closed) before its op has completed");
        }
        return new KoloException("rank " + rank + " could not read " + wanted + " bytes from rank " + peer
                + "'s memory (process_vm_readv: " + (errno != 0 ? "errno " + errno : got + " bytes") + "); set"
                + " KOLO_SHM_SINGLE_COPY=0 to copy through shared memory instead");
    }

    /** What this side of the call waits for, for a timeout's message; empty when nothing. */
    String waitingFor() {
        return active() ? "to receive " + total + " bytes from rank " + peer + " (" + (total - left) + " received)"
                : "";
    }
}
