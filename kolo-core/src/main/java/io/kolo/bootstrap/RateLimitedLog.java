package io.kolo.bootstrap;

import java.util.concurrent.TimeUnit;

/**
 * A warning that may repeat without bound (a rejected stranger, an accept error) logged at most once per interval,
 * each line saying how many were left out since the last, so a flood of connections cannot flood the log.
 */
final class RateLimitedLog {
    private static final long INTERVAL_NANOS = TimeUnit.SECONDS.toNanos(10);

    private final System.Logger log;
    private long lastNanos;
    private boolean logged;
    private long suppressed;

    RateLimitedLog(System.Logger log) {
        this.log = log;
    }

    synchronized void warn(String message) {
        long now = System.nanoTime();
        if (logged && now - lastNanos < INTERVAL_NANOS) {
            suppressed++;
            return;
        }
        String more = suppressed == 0 ? "" : " (and " + suppressed + " more like it in the last "
                + TimeUnit.NANOSECONDS.toSeconds(now - lastNanos) + " s)";
        try {
            log.log(System.Logger.Level.WARNING, message + more);
        } catch (RuntimeException | LinkageError e) {
            // Out of descriptors, the logging system itself can fail (its first record loads the time-zone
            // database): a server that logs must never die of it. The count goes into the next line instead.
            suppressed++;
            return;
        }
        logged = true;
        lastNanos = now;
        suppressed = 0;
    }

    synchronized long suppressed() {
        return suppressed;
    }
}
