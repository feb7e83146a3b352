package io.kolo.bench;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Locale;

/**
 * Where the measured tensors live ({@code kolo bench --memory}): off-heap memory, as a framework's native tensors, or
 * Java arrays, as {@code Kolo.allreduce(float[])} in a plain Java training loop.
 */
public enum Memory {
    NATIVE(""),
    HEAP(" heap");

    private final String seriesSuffix;

    Memory(String seriesSuffix) {
        this.seriesSuffix = seriesSuffix;
    }

    public String id() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** The Kolo series' name on {@code transport}: "Kolo shm", or "Kolo shm heap" for Java arrays. */
    public String seriesName(String transport) {
        return "Kolo " + transport + seriesSuffix;
    }

    /**
     * {@code bytes} of zeroed memory for elements of {@code type}: from {@code arena}, or a Java array of the element
     * type's own kind (what a user's {@code float[]}, {@code double[]}, {@code int[]}, {@code long[]} or {@code short[]}
     * is), kept alive by the segment.
     */
    MemorySegment allocate(Arena arena, ElementType type, long bytes) {
        if (this == NATIVE) {
            return arena.allocate(bytes, 64);
        }
        int elements = Math.toIntExact(bytes / type.byteSize());
        return switch (type) {
            case F32 -> MemorySegment.ofArray(new float[elements]);
            case F64 -> MemorySegment.ofArray(new double[elements]);
            case BF16, F16 -> MemorySegment.ofArray(new short[elements]);
            case I32 -> MemorySegment.ofArray(new int[elements]);
            case I64 -> MemorySegment.ofArray(new long[elements]);
        };
    }

    public static Memory parse(String name) {
        for (Memory m : values()) {
            if (m.id().equals(name.toLowerCase(Locale.ROOT))) {
                return m;
            }
        }
        throw new IllegalArgumentException("unknown --memory '" + name + "'; use native or heap");
    }
}
