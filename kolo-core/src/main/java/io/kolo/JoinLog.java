package io.kolo;

import io.kolo.bootstrap.Durations;
import io.kolo.bootstrap.KoloSettings;
import io.kolo.bootstrap.LazyLogger;
import io.kolo.engine.EngineSettings;
import io.kolo.transport.Transport;

import java.util.Map;

/**
 * What {@code KOLO_LOG_LEVEL=debug} says about a rank's start, as {@code HOROVOD_LOG_LEVEL=debug} does: where the rank
 * is, how it talks to the others and with which engine settings. Only at {@code debug} or {@code trace}: a logger's
 * first lookup scans the class path, which a normal start does not pay for (docs/performance.md, "First run").
 */
final class JoinLog {
    private static final System.Logger LOG = LazyLogger.of(JoinLog.class);

    private JoinLog() {
    }

    static void joined(Map<String, String> env, Topology t, Transport transport, EngineSettings s, long startNanos) {
        String level = KoloSettings.LOG_LEVEL.from(env);
        if (!"debug".equals(level) && !"trace".equals(level)) {
            return;
        }
        LOG.log(System.Logger.Level.DEBUG, "rank " + t.rank() + " of " + t.size() + " joined in "
                + (System.nanoTime() - startNanos) / 1_000_000 + " ms: local rank " + t.localRank() + " of "
                + t.localSize() + ", cross rank " + t.crossRank() + " of " + t.crossSize() + "; " + transport
                + "; fusion threshold " + s.fusionThresholdBytes() + " bytes, cycle time " + s.cycleTime().toNanos()
                / 1e6 + " ms, response cache " + (s.cacheCapacity() > 0 ? s.cacheCapacity() + " entries" : "off")
                + ", compression " + s.compression() + ", timeout " + Durations.describe(s.timeout()));
    }
}
