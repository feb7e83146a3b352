package io.kolo.collective;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * A native buffer that is reused across calls and replaced only when a call needs more than it holds, so that
 * steady-state collectives allocate nothing. Each buffer has its own arena because a shared arena can only free
 * everything at once. Public because the engine keeps its fusion buffers the same way.
 */
public final class Scratch implements AutoCloseable {

    private Arena arena;
    private MemorySegment segment = MemorySegment.NULL;

    /** Returns a segment of at least {@code bytes} bytes; its previous contents are unspecified. */
    public MemorySegment get(long bytes) {
        if (segment.byteSize() < bytes) {
            // Grow geometrically so that slowly increasing sizes do not reallocate on every call.
            long size = Math.max(bytes, Math.min(2 * segment.byteSize(), Long.MAX_VALUE / 2));
            Arena fresh = Arena.ofShared();
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
            arena.close();
            arena = null;
        }
        segment = MemorySegment.NULL;
    }
}
