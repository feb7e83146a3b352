package io.kolo.transport;

/**
 * How messages travel between ranks of one host: the piece size through a ring, when a message is read straight
 * from the sender's memory instead, and the header that tells the receiver which. Sender and receiver derive the
 * same decisions from these and a message's length, so they agree without asking each other.
 */
final class ShmWire {
    private ShmWire() {
    }

    /**
     * Largest piece published at once, so the consumer starts copying while the producer still copies, and a piece is
     * still in cache when it is copied out. Measured with {@code kolo bench allreduce} at 256 KiB to 4 MiB against 32
     * and 256 KiB pieces (docs/performance.md, "Measured constants").
     */
    static final long CHUNK = 64 << 10;
    /**
     * Bytes read straight from a sender's memory per call when they are combined or land in Java heap memory: one
     * process_vm_readv call per piece, so pieces are larger than {@link #CHUNK}: each call pins and walks the sender's
     * pages anew.
     */
    static final long STAGE_BYTES = 256 << 10;
    /**
     * Received pieces at least this large are combined straight out of the ring; smaller ones are staged and
     * combined in one pass, which measured faster below it ({@code kolo bench allreduce -np 2}, see
     * docs/performance.md, "Measured constants").
     */
    static final long COMBINE_IN_PLACE_MIN_BYTES = 256 << 10;
    /**
     * Messages at least this large travel in one copy where the receiver may read the sender's memory
     * ({@link CrossMemory}): the sender puts only a header with the address into the ring, the receiver copies the
     * bytes straight out of the sender's process and tells it so. Smaller ones, and any from Java heap memory (it has
     * no fixed address), are copied through the ring.
     */
    static final long DIRECT_MIN_BYTES = 64 << 10;
    /**
     * Whether a message of {@code length} bytes travels as one slot ({@link ShmRing#offerSlot}): the sender and the
     * receiver both ask, so both frame it alike.
     */
    static boolean slot(long length) {
        return length > 0 && length <= ShmRing.SLOT_DATA_BYTES;
    }

    /** Header kinds, before every message of {@link #DIRECT_MIN_BYTES} or more between ranks that can read directly. */
    static final long HEADER_INLINE = 0x4B4F4C4F494E4C4EL;
    static final long HEADER_DIRECT = 0x4B4F4C4F44495254L;
    static final int HEADER_BYTES = 16;
}
