package io.kolo.transport;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;

/**
 * A single-producer/single-consumer byte ring inside a shared-memory segment: one direction of one pair of ranks.
 *
 * <p>Layout from the region's start: the producer's position (total bytes ever written) in its own 128-byte block,
 * the consumer's position (total bytes ever read) and its count of messages read directly in the next, then
 * {@code capacity} data bytes. Positions only grow,
 * so {@code tail - head} is the number of unread bytes and no slot is ever ambiguous. The producer publishes with a
 * release store after copying and the consumer reads it with an acquire load (and vice versa for the head), which
 * is all the ordering two processes need; neither side ever takes a lock, so a process that dies mid-copy leaves
 * nothing the other side could block on but the data it never sent.
 */
final class ShmRing {
    /** Bytes before the data: two positions, each alone on a pair of cache lines (adjacent-line prefetch). */
    static final long CONTROL_BYTES = 256;
    private static final long TAIL = 0;
    private static final long HEAD = 128;
    /** Messages the consumer has read straight from the producer's memory (see {@link ShmTransport}); its writer. */
    private static final long DIRECT_READS = 192;
    /** The ring's slot key, written once by the file's owner before any peer maps it (see {@link #offerSlot}). */
    private static final long SLOT_KEY = 64;
    /** Slots start on a cache line and fill whole ones. */
    private static final long LINE_BYTES = 64;
    /**
     * The largest slot: a check word and then up to {@link #SLOT_DATA_BYTES} of message, in whole cache lines. Eight
     * lines take the cycle's vote with a small allreduce's payload of up to 256 bytes; 1 line was slower from 32 B of
     * payload up, 32 lines no faster at 512 B-2 KiB ({@code kolo bench allreduce -np 2}, docs/performance.md,
     * "Measured constants").
     */
    static final long SLOT_MAX_BYTES = 8 * LINE_BYTES;
    /**
     * Messages of at most this many bytes travel as a slot ({@link #offerSlot}): the receiver then waits on one cache
     * line that holds both the start of the message and the word saying all of it is there, where a message in the
     * byte stream costs it two lines fetched one after the other (the producer's position, then the bytes).
     */
    static final long SLOT_DATA_BYTES = SLOT_MAX_BYTES - 8;
    /** Free bytes that always fit the next slot, padding to its line and past the ring's end included. */
    static final long SLOT_ROOM_BYTES = 2 * SLOT_MAX_BYTES - 1;
    private static final VarHandle LONG = ValueLayout.JAVA_LONG.varHandle();
    /**
     * Pieces up to this size are copied word by word: {@link MemorySegment#copy}'s fixed cost (its checks, an overlap
     * test among them) was the largest part of a small message's time in the ring (docs/performance.md, "Measured
     * constants").
     */
    static final long WORD_COPY_MAX_BYTES = 64;

    private final MemorySegment control;
    private final MemorySegment data;
    private final long capacity;
    private final long mask;
    /** Mixed into every slot's check word, so that no byte pattern left in the ring by earlier messages can pass it. */
    private final long slotKey;
    /**
     * Producer side: the consumer's position as last read. It only grows, so a stale value understates the free
     * space and is safe; it is read again only when the ring looks too full for what is offered. Reading it on every
     * offer pulled the consumer's cache line over at every message, and the consumer's next write pulled it back:
     * two cross-core transfers per message in each direction (Aeron's producers cache the consumer position alike).
     */
    private long cachedHead;

    /** Views {@code CONTROL_BYTES + capacity} bytes of {@code segment} from {@code offset}; capacity is a power of two. */
    ShmRing(MemorySegment segment, long offset, long capacity) {
        if (Long.bitCount(capacity) != 1) {
            throw new IllegalArgumentException("ring capacity must be a power of two, got " + capacity);
        }
        this.control = segment.asSlice(offset, CONTROL_BYTES);
        this.data = segment.asSlice(offset + CONTROL_BYTES, capacity);
        this.capacity = capacity;
        this.mask = capacity - 1;
        this.slotKey = (long) LONG.get(control, SLOT_KEY);
    }

    /**
     * Owner side, once, when the ring's file is created: sets the ring at {@code offset} of {@code segment} up with a
     * slot key. The top bit is set, so no check word of a slot can be zero (the fresh ring's bytes).
     */
    static void initialize(MemorySegment segment, long offset, long key) {
        LONG.set(segment, offset + SLOT_KEY, key | Long.MIN_VALUE);
    }

    static long bytes(long capacity) {
        return CONTROL_BYTES + capacity;
    }

    long capacity() {
        return capacity;
    }

    /** Producer side: copies up to {@code length} bytes in, as many as fit now; returns how many (0 when full). */
    long offer(MemorySegment src, long offset, long length) {
        long tail = (long) LONG.get(control, TAIL);
        if (capacity - (tail - cachedHead) < length) {
            cachedHead = (long) LONG.getAcquire(control, HEAD);
        }
        long n = Math.min(length, capacity - (tail - cachedHead));
        if (n <= 0) {
            return 0;
        }
        long at = tail & mask;
        long first = Math.min(n, capacity - at);
        copy(src, offset, data, at, first);
        if (n > first) {
            copy(src, offset + first, data, 0, n - first);
        }
        LONG.setRelease(control, TAIL, tail + n);
        return n;
    }

    /**
     * Producer side: the whole message of {@code length} bytes (at most {@link #SLOT_DATA_BYTES}) as one slot, or
     * nothing (returns 0) while the ring lacks the room. The slot starts at the next cache line of the stream (at the
     * ring's start where its lines would run past the end), which the consumer computes alike from the length; the
     * check word, written last, is the slot's position plus one mixed with the ring's key, so it matches only this
     * slot, never what an earlier lap left there, and a reader that sees it sees every line of the slot (release and
     * acquire). The producer's position moves past the slot afterwards, for the free-space and wake-up checks. The
     * ring must hold at least {@link #SLOT_ROOM_BYTES} (the transport's rings hold 4096 bytes or more).
     */
    long offerSlot(MemorySegment src, long offset, long length) {
        assert capacity >= SLOT_ROOM_BYTES : "a " + capacity + "-byte ring is too small for slots";
        long tail = (long) LONG.get(control, TAIL);
        long bytes = slotBytes(length);
        long at = slotAt(tail, bytes);
        long end = at + bytes;
        if (end - cachedHead > capacity) {
            cachedHead = (long) LONG.getAcquire(control, HEAD);
            if (end - cachedHead > capacity) {
                return 0;
            }
        }
        long i = at & mask;
        copy(src, offset, data, i + 8, length);
        LONG.setRelease(data, i, (at + 1) ^ slotKey);
        LONG.setRelease(control, TAIL, end);
        return length;
    }

    /** Whole lines for a check word and {@code length} bytes. */
    private static long slotBytes(long length) {
        return (8 + length + LINE_BYTES - 1) & -LINE_BYTES;
    }

    /**
     * Where the next slot of {@code bytes} starts in the stream, from the producer's or the consumer's position alike:
     * the next line, or the next lap's start where the slot would run past the ring's end.
     */
    private long slotAt(long position, long bytes) {
        long at = (position + LINE_BYTES - 1) & -LINE_BYTES;
        if ((at & mask) + bytes > capacity) {
            at = (at + capacity) & ~mask;
        }
        return at;
    }

    /** Consumer side: the slot {@link #offerSlot} writes next, {@code length} bytes of it; 0 until it is there. */
    long pollSlot(MemorySegment dst, long offset, long length) {
        long head = (long) LONG.get(control, HEAD);
        long bytes = slotBytes(length);
        long at = slotAt(head, bytes);
        long i = at & mask;
        if ((long) LONG.getAcquire(data, i) != ((at + 1) ^ slotKey)) {
            return 0;
        }
        copy(data, i + 8, dst, offset, length);
        LONG.setRelease(control, HEAD, at + bytes);
        return length;
    }

    /** Consumer side: copies up to {@code length} available bytes out; returns how many (0 when empty). */
    long poll(MemorySegment dst, long offset, long length) {
        long head = (long) LONG.get(control, HEAD);
        long tail = (long) LONG.getAcquire(control, TAIL);
        long n = Math.min(length, tail - head);
        if (n <= 0) {
            return 0;
        }
        long at = head & mask;
        long first = Math.min(n, capacity - at);
        copy(data, at, dst, offset, first);
        if (n > first) {
            copy(data, 0, dst, offset + first, n - first);
        }
        LONG.setRelease(control, HEAD, head + n);
        return n;
    }

    /** {@link MemorySegment#copy}, by 8-byte words and then bytes for pieces of at most {@link #WORD_COPY_MAX_BYTES}. */
    static void copy(MemorySegment src, long srcOffset, MemorySegment dst, long dstOffset, long bytes) {
        if (bytes > WORD_COPY_MAX_BYTES) {
            MemorySegment.copy(src, srcOffset, dst, dstOffset, bytes);
            return;
        }
        long i = 0;
        for (; i + 8 <= bytes; i += 8) {
            dst.set(ValueLayout.JAVA_LONG_UNALIGNED, dstOffset + i, src.get(ValueLayout.JAVA_LONG_UNALIGNED, srcOffset + i));
        }
        for (; i < bytes; i++) {
            dst.set(ValueLayout.JAVA_BYTE, dstOffset + i, src.get(ValueLayout.JAVA_BYTE, srcOffset + i));
        }
    }

    /**
     * Consumer side: combines up to {@code length} available bytes, whole multiples of {@code unit}, into
     * {@code acc} straight from the ring (no copy out); returns how many (0 when less than a unit has arrived). A
     * unit that wraps around the ring's end is gathered into {@code stash} (at least {@code unit} bytes) first:
     * earlier messages of other lengths leave the positions at any byte.
     */
    long pollCombine(MemorySegment acc, long offset, long length, int unit, MemorySegment stash, Combiner combiner) {
        long head = (long) LONG.get(control, HEAD);
        long tail = (long) LONG.getAcquire(control, TAIL);
        long n = Math.min(length, tail - head);
        n -= n % unit;
        if (n <= 0) {
            return 0;
        }
        long at = head & mask;
        long first = Math.min(n, capacity - at);
        if (first == n) {
            combiner.combine(acc, offset, data, at, n);
        } else {
            long whole = first - first % unit;
            if (whole > 0) {
                combiner.combine(acc, offset, data, at, whole);
            }
            long split = first - whole;
            long wrapped = 0;
            if (split > 0) {
                MemorySegment.copy(data, at + whole, stash, 0, split);
                MemorySegment.copy(data, 0, stash, split, unit - split);
                combiner.combine(acc, offset + whole, stash, 0, unit);
                wrapped = unit - split;
            }
            long done = whole + (split > 0 ? unit : 0);
            if (n > done) {
                combiner.combine(acc, offset + done, data, wrapped, n - done);
            }
        }
        LONG.setRelease(control, HEAD, head + n);
        return n;
    }

    /** Consumer side: one more message read straight from the producer's memory, which may now reuse it. */
    void directReadDone() {
        LONG.setRelease(control, DIRECT_READS, (long) LONG.get(control, DIRECT_READS) + 1);
    }

    /** Producer side: how many messages the consumer has read straight from the producer's memory so far. */
    long directReads() {
        return (long) LONG.getAcquire(control, DIRECT_READS);
    }

    /** Free bytes, as the producer sees them. */
    long free() {
        return capacity - ((long) LONG.get(control, TAIL) - (long) LONG.getAcquire(control, HEAD));
    }

    /** Unread bytes, as the consumer sees them. */
    long available() {
        return (long) LONG.getAcquire(control, TAIL) - (long) LONG.get(control, HEAD);
    }

    /** Bytes written and bytes read so far, for error messages. */
    long written() {
        return (long) LONG.getAcquire(control, TAIL);
    }

    long read() {
        return (long) LONG.getAcquire(control, HEAD);
    }
}
