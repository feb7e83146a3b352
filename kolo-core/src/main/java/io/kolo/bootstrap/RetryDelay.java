package io.kolo.bootstrap;

import java.time.Duration;

/**
 * The wait between attempts at something that is not there yet (a server still starting, a host name not yet in
 * DNS): short at first, doubling up to a ceiling, so a fast start is seen at once and a slow one is not hammered.
 */
public final class RetryDelay {
    private final Duration max;
    private Duration next;

    public RetryDelay(Duration first, Duration max) {
        this.next = first;
        this.max = max;
    }

    /** The wait before the next attempt. */
    public Duration peek() {
        return next;
    }

    /** Whether another wait still ends before {@code deadlineNanos} ({@link System#nanoTime()} terms). */
    public boolean fitsBefore(long deadlineNanos) {
        return System.nanoTime() + next.toNanos() < deadlineNanos;
    }

    /** Sleeps the current wait (at most until {@code deadlineNanos}) and doubles the next one, up to the ceiling. */
    public void sleep(long deadlineNanos) throws InterruptedException {
        long left = deadlineNanos - System.nanoTime();
        Thread.sleep(Duration.ofNanos(Math.max(1_000_000, Math.min(next.toNanos(), left))));
        Duration doubled = next.multipliedBy(2);
        next = doubled.compareTo(max) > 0 ? max : doubled;
    }
}
