package io.kolo.collective;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * A native buffer that is reused across calls and replaced only when a call needs more than it holds, so that
 * steady-state collectives allocate nothing. Each buffer has its own arena because a shared arena can only free
 * everything at once. Public because the engine keeps its fusion buffers the same way.
 *
 * <p>A buffer of up to {@link #COLLECTED_MAX_BYTES} is freed by the garbage collector once unreachable; a larger one is
 * freed at once when replaced or closed. Closing a shared arena stops every thread of the JVM for a moment to check that
 * none is reading it, so with many ranks as threads of one JVM (a thousand in {@code kolo bench scale}) each rank's
 * closing of its small buffers cost a pause proportional to the number of ranks: quadratic in all, minutes at shutdown.
 * The memory of a big buffer is worth that pause; a small one's is not.
 */
public final class Scratch implements AutoCloseable {
    /** Buffers up to this size are left to the garbage collector instead of freed when closed. */
    static final long COLLECTED_MAX_BYTES = 1L << 20;

    private Arena arena;
    private MemorySegment segment = MemorySegment.NULL;

    /** Returns a segment of at least {@code bytes} bytes; its previous contents are unspecified. */
    public MemorySegment get(long bytes) {
        if (segment.byteSize() < bytes) {
            // Grow geometrically so that slowly increasing sizes do not reallocate on every call.
            long size = Math.max(bytes, Math.min(2 * segment.byteSize(), Long.MAX_VALUE / 2));
            Arena fresh = size <= COLLECTED_MAX_BYTES ? Arena.ofAuto() : Arena.ofShared();
            MemorySegment grown = fresh.allocate(size, 64);
            close();
            arena = fresh;
            segment = grown;
        }
        return segment;
    }

    @Override
    public void close() {
        if (arena != null) {
            if (segment.byteSize() > COLLECTED_MAX_BYTES) {   // an automatic arena cannot be closed
                arena.close();
            }
            arena = null;
        }
        segment = MemorySegment.NULL;
    }
}
