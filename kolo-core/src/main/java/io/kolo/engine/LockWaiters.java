package io.kolo.engine;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.locks.LockSupport;

/**
 * The callers asleep while another thread runs their engine's cycles, so that the thread running them can wake them
 * when there is something to see (an op completed, the cycle lock free) instead of each caller waking on a timer to
 * look. A fixed number of slots, taken and given back without allocation: a rank rarely has more than one thread
 * waiting for its own op at once, and a caller that finds every slot taken waits the old way, on a short timer.
 */
final class LockWaiters {
    private final AtomicReferenceArray<Thread> slots;
    /** How many slots are taken: the thread running a cycle reads only this while nobody waits. */
    private final AtomicInteger waiting = new AtomicInteger();

    LockWaiters(int capacity) {
        this.slots = new AtomicReferenceArray<>(capacity);
    }

    /** Takes a slot for {@code t}; its index, or -1 when all are taken. */
    int register(Thread t) {
        for (int i = 0; i < slots.length(); i++) {
            if (slots.get(i) == null && slots.compareAndSet(i, null, t)) {
                waiting.incrementAndGet();
                return i;
            }
        }
        return -1;
    }

    void unregister(int slot) {
        if (slot >= 0) {
            slots.set(slot, null);
            waiting.decrementAndGet();
        }
    }

    boolean any() {
        return waiting.get() > 0;
    }

    /** Unparks every registered waiter; each looks at its op and the lock, and sleeps again if neither changed. */
    void wakeAll() {
        if (waiting.get() == 0) {
            return;
        }
        for (int i = 0; i < slots.length(); i++) {
            Thread t = slots.get(i);
            if (t != null) {
                LockSupport.unpark(t);
            }
        }
    }
}
