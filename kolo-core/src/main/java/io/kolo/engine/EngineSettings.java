package io.kolo.engine;

import io.kolo.Compression;
import io.kolo.collective.AlgorithmSettings;
import io.kolo.collective.Collectives;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;

/**
 * Engine tuning, read from {@code KOLO_*} variables with Horovod's defaults.
 *
 * @param fusionThresholdBytes {@code KOLO_FUSION_THRESHOLD}: largest fused buffer; 0 disables fusion
 * @param cycleTime            {@code KOLO_CYCLE_TIME} (ms): how often the background thread negotiates
 * @param cacheCapacity        {@code KOLO_CACHE_CAPACITY}: response-cache entries; 0 disables the cache
 * @param timeline             {@code KOLO_TIMELINE}: Chrome-trace file written by rank 0, or null
 * @param stallCheckTime       {@code KOLO_STALL_CHECK_TIME_SECONDS}: when rank 0 warns about ops some ranks never submitted
 * @param stallShutdownTime    {@code KOLO_STALL_SHUTDOWN_TIME_SECONDS}: when such ops fail on every rank; zero = never
 * @param timeout              {@code KOLO_TIMEOUT_SECONDS}: default wait for a handle
 * @param smallMessageBytes    {@code KOLO_SMALL_ALLREDUCE_BYTES}: below this, allreduce uses the latency-optimal algorithm;
 *                             {@link Collectives#AUTO} (unset) scales it with the number of ranks
 * @param algorithms           {@code KOLO_HIERARCHICAL_ALLREDUCE} and {@code KOLO_HIERARCHICAL_ALLGATHER}
 * @param compression          {@code KOLO_COMPRESSION}: compression of allreduces that name none
 * @param eagerAllreduceBytes  {@code KOLO_EAGER_ALLREDUCE_BYTES}: a cached allreduce of at most this many bytes
 *                             travels with the negotiation that finds it ready everywhere (one round of messages
 *                             instead of two); 0 disables
 */
public record EngineSettings(long fusionThresholdBytes, Duration cycleTime, int cacheCapacity, Path timeline,
                             Duration stallCheckTime, Duration stallShutdownTime, Duration timeout,
                             long smallMessageBytes, AlgorithmSettings algorithms,
                             Compression compression, long eagerAllreduceBytes) {

    public static final long DEFAULT_FUSION_THRESHOLD = 128L << 20;
    /**
     * Latency-bound sizes only: every cycle, idle ones too, carries a payload this large once an op this small has
     * been repeated. 8 KiB is a judgement, not a measured crossover (a 1-8 KiB op costs a few microseconds of which
     * one exchange is 1-3); measure with {@code kolo bench -x KOLO_EAGER_ALLREDUCE_BYTES=...} before changing it.
     */
    public static final long DEFAULT_EAGER_ALLREDUCE_BYTES = 8L << 10;
    /** Large enough for any latency-bound payload; the negotiation buffer is sized for it up front. */
    static final long MAX_EAGER_ALLREDUCE_BYTES = 1L << 20;

    /** Horovod's defaults. */
    public static EngineSettings defaults() {
        return fromEnvironment(Map.of());
    }

    /** Reads the {@code KOLO_*} variables; a bad value is an IllegalArgumentException naming the variable. */
    public static EngineSettings fromEnvironment(Map<String, String> env) {
        long fusion = number(env, "KOLO_FUSION_THRESHOLD", DEFAULT_FUSION_THRESHOLD, "bytes, 0 disables fusion");
        double cycleMs = decimal(env, "KOLO_CYCLE_TIME", 1.0, "milliseconds");
        long cache = number(env, "KOLO_CACHE_CAPACITY", 1024, "entries, 0 disables the cache");
        if (cache > 1 << 20) {
            throw new IllegalArgumentException("KOLO_CACHE_CAPACITY=" + cache + " is too large: use at most 1048576");
        }
        String timelineValue = env.get("KOLO_TIMELINE");
        Path timeline = timelineValue == null || timelineValue.isBlank() ? null : Path.of(timelineValue);
        long stallCheck = number(env, "KOLO_STALL_CHECK_TIME_SECONDS", 60, "seconds");
        long stallShutdown = number(env, "KOLO_STALL_SHUTDOWN_TIME_SECONDS", 0, "seconds, 0 = never");
        long timeout = number(env, "KOLO_TIMEOUT_SECONDS", 300, "seconds");
        if (timeout == 0) {
            throw new IllegalArgumentException("KOLO_TIMEOUT_SECONDS=0 is not allowed: every wait needs a timeout (seconds > 0)");
        }
        long small = number(env, "KOLO_SMALL_ALLREDUCE_BYTES", Collectives.AUTO, "bytes");
        long eager = number(env, "KOLO_EAGER_ALLREDUCE_BYTES", DEFAULT_EAGER_ALLREDUCE_BYTES, "bytes, 0 disables");
        if (eager > MAX_EAGER_ALLREDUCE_BYTES) {
            throw new IllegalArgumentException("KOLO_EAGER_ALLREDUCE_BYTES=" + eager + " is too large: use at most "
                    + MAX_EAGER_ALLREDUCE_BYTES + " (larger allreduces gain nothing from riding with the negotiation)");
        }
        return new EngineSettings(fusion, Duration.ofNanos((long) (cycleMs * 1_000_000)), (int) cache, timeline,
                Duration.ofSeconds(stallCheck), Duration.ofSeconds(stallShutdown), Duration.ofSeconds(timeout), small,
                AlgorithmSettings.fromEnvironment(env), Compression.fromEnvironment(env), eager);
    }

    private static long number(Map<String, String> env, String name, long fallback, String unit) {
        String v = env.get(name);
        if (v == null || v.isBlank()) {
            return fallback;
        }
        try {
            long n = Long.parseLong(v.trim());
            if (n < 0) {
                throw new NumberFormatException();
            }
            return n;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(name + "='" + v + "' is not a non-negative integer (" + unit + ")");
        }
    }

    private static double decimal(Map<String, String> env, String name, double fallback, String unit) {
        String v = env.get(name);
        if (v == null || v.isBlank()) {
            return fallback;
        }
        try {
            double d = Double.parseDouble(v.trim());
            if (!(d >= 0) || Double.isInfinite(d)) {
                throw new NumberFormatException();
            }
            return d;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(name + "='" + v + "' is not a non-negative number (" + unit + ")");
        }
    }
}
