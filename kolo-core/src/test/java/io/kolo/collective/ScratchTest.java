package io.kolo.collective;

import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ScratchTest {

    /**
     * A big buffer is freed the moment it is replaced or closed; a small one is left to the collector, so closing it
     * costs no stop of every thread of the JVM (a shared arena's close), which with a thousand ranks as threads made
     * shutdown quadratic. Whoever still holds a small one reads valid memory.
     */
    @Test
    void bigBuffersAreFreedAtOnceSmallOnesByTheCollector() {
        Scratch scratch = new Scratch();
        MemorySegment small = scratch.get(4096);
        small.set(ValueLayout.JAVA_LONG, 0, 42);
        assertSame(small, scratch.get(1000), "a smaller request reuses the buffer");

        MemorySegment big = scratch.get(Scratch.COLLECTED_MAX_BYTES + 1);
        assertTrue(big.byteSize() > Scratch.COLLECTED_MAX_BYTES);
        assertTrue(small.scope().isAlive(), "a replaced small buffer stays valid until unreachable");
        assertEquals(42, small.get(ValueLayout.JAVA_LONG, 0));

        MemorySegment bigger = scratch.get(4 * Scratch.COLLECTED_MAX_BYTES);
        assertFalse(big.scope().isAlive(), "a replaced big buffer is freed at once");
        scratch.close();
        assertFalse(bigger.scope().isAlive(), "closing frees a big buffer at once");

        Scratch other = new Scratch();
        MemorySegment kept = other.get(64);
        other.close();
        assertTrue(kept.scope().isAlive(), "closing leaves a small buffer to the collector");
        assertEquals(64, other.get(64).byteSize(), "a closed scratch allocates again when asked");
    }
}
