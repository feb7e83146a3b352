package io.kolo.engine;

import java.util.concurrent.atomic.AtomicLong;

/**
 * A count that one thread at a time adds to (the thread running the engine's cycle) and any thread reads. An add is a
 * release store: a volatile {@code ++} costs a full fence, and the engine counts several things on every small op.
 */
final class Counter {
    private final AtomicLong value = new AtomicLong();

    void add(long n) {
        if (n != 0) {
            value.setRelease(value.getPlain() + n);
        }
    }

    void increment() {
        add(1);
    }

    long get() {
        return value.getAcquire();
    }
}
