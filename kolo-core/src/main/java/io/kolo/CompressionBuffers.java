package io.kolo;

import java.util.ArrayList;
import java.util.List;

/**
 * Reuses the 16-bit copies of compressed allreduces, so that a training loop that reduces the same tensors every
 * step stops allocating them after the first. Taken on the caller's thread, given back on the engine's; a buffer
 * whose op failed is simply left to the garbage collector.
 */
final class CompressionBuffers {

    /** Beyond this many idle buffers, returned ones are dropped: sizes that never come back must not pile up. */
    private static final int MAX_IDLE = 256;

    private final List<short[]> idle = new ArrayList<>();

    /** A buffer of exactly {@code length} elements, contents unspecified. */
    synchronized short[] take(int length) {
        // Linear scan: the idle list holds about one buffer per distinct tensor in flight, and narrowing the
        // tensor costs far more than the scan.
        for (int i = idle.size() - 1; i >= 0; i--) {
            if (idle.get(i).length == length) {
                short[] b = idle.get(i);
                idle.set(i, idle.getLast());
                idle.removeLast();
                return b;
            }
        }
        return new short[length];
    }

    synchronized void give(short[] buffer) {
        if (idle.size() < MAX_IDLE) {
            idle.add(buffer);
        }
    }
}
