package io.kolo.bench;

import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;

/**
 * Whether this JVM's JIT compiler has been at work lately, from its total compilation time. A benchmark that times
 * ops while the compiler still works on their code measures the compiler's share of the CPU too.
 */
final class JitActivity {
    private final CompilationMXBean bean = ManagementFactory.getCompilationMXBean();
    private final boolean supported = bean != null && bean.isCompilationTimeMonitoringSupported();
    private long lastTotalMillis = -1;
    private long lastChangeNanos;

    /** Starts watching afresh: the JIT counts as busy from now until it has been seen still. */
    void reset() {
        lastTotalMillis = supported ? bean.getTotalCompilationTime() : -1;
        lastChangeNanos = System.nanoTime();
    }

    /** True if the compilation time grew within the last {@code nanos} (false where the JVM does not tell). */
    boolean compiledWithin(long nanos) {
        if (!supported) {
            return false;
        }
        long now = System.nanoTime();
        long total = bean.getTotalCompilationTime();
        if (total != lastTotalMillis) {
            lastTotalMillis = total;
            lastChangeNanos = now;
        }
        return now - lastChangeNanos < nanos;
    }
}
