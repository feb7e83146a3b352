package io.kolo.bootstrap;

import java.util.concurrent.atomic.LongAdder;

/**
 * What the job's ranks asked of the rendezvous store, for {@code kolo bench scale}: how start-up load grows with the
 * job. Written by the serving thread, read by any.
 */
final class RequestCounts {
    private final LongAdder requests = new LongAdder();
    private final LongAdder bytesReceived = new LongAdder();
    private final LongAdder bytesSent = new LongAdder();

    void received(int bytes) {
        bytesReceived.add(bytes);
    }

    /** One request answered with {@code bytes}; counted before the answer leaves (see {@link StoreConnection}). */
    void answered(int bytes) {
        requests.increment();
        bytesSent.add(bytes);
    }

    long requests() {
        return requests.sum();
    }

    long bytes() {
        return bytesReceived.sum() + bytesSent.sum();
    }
}
