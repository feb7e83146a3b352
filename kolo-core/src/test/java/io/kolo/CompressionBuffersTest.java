package io.kolo;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;

class CompressionBuffersTest {

    @Test
    void aReturnedBufferIsReusedForTheSameLengthOnly() {
        CompressionBuffers pool = new CompressionBuffers();
        short[] a = pool.take(10);
        short[] b = pool.take(10);
        assertNotSame(a, b);
        pool.give(a);
        assertEquals(11, pool.take(11).length);
        assertSame(a, pool.take(10));
        assertNotSame(a, pool.take(10));
    }
}
