package io.kolo.engine;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * A native buffer that grows (in whole MiB) when a larger op needs it and is otherwise reused, so the
 * steady state allocates nothing. Owned by the engine thread.
 */
final class Scratch implements AutoCloseable {
    private static final long MIB = 1 << 20;
    private Arena arena;
    private MemorySegment segment = MemorySegment.NULL;

    /** A segment of at least {@code bytes} bytes (contents unspecified), sliced to exactly {@code bytes}. */
    MemorySegment get(long bytes) {
        if (segment.byteSize() < bytes) {
            close();
            arena = Arena.ofShared();
            segment = arena.allocate((bytes + MIB - 1) / MIB * MIB, 64);
        }
        return segment.byteSize() == bytes ? segment : segment.asSlice(0, bytes);
    }

    @Override
    public void close() {
        if (arena != null) {
            arena.close();
            arena = null;
            segment = MemorySegment.NULL;
        }
    }
}
