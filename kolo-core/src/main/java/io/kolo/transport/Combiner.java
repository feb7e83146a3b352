package io.kolo.transport;

import java.lang.foreign.MemorySegment;

/**
 * What {@link Transport#sendRecvCombine} does with received bytes instead of storing them: typically
 * {@code acc[i] = op(acc[i], in[i])} element-wise. Implementations keep their element type and operation in fields
 * set before the call, so that passing one allocates nothing.
 */
@FunctionalInterface
public interface Combiner {
    /** Combines {@code bytes} bytes of {@code in} from {@code inOffset} into {@code acc} at {@code accOffset}. */
    void combine(MemorySegment acc, long accOffset, MemorySegment in, long inOffset, long bytes);
}
