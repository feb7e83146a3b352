package io.kolo.engine;

import io.kolo.Compression;
import io.kolo.collective.AlgorithmSettings;
import io.kolo.bootstrap.KoloSettings;
import io.kolo.collective.FlatCollectives;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;

/**
 * Engine tuning, read from {@code KOLO_*} variables with Horovod's defaults.
 *
 * @param fusionThresholdBytes {@code KOLO_FUSION_THRESHOLD}: largest fused buffer; 0 disables fusion
 * @param cycleTime            {@code KOLO_CYCLE_TIME} (ms): how often the background thread negotiates
 * @param cacheCapacity        {@code KOLO_CACHE_CAPACITY}: response-cache entries; 0 disables the cache
 * @param timeline             {@code KOLO_TIMELINE}: Chrome-trace file written by rank 0, or null (an elastic job's later
 *                             generations write beside it, see {@link JobFiles})
 * @param markCycles           {@code KOLO_TIMELINE_MARK_CYCLES}: the timeline marks the start of each cycle that runs ops
 * @param stallCheckTime       {@code KOLO_STALL_CHECK_TIME_SECONDS}: when rank 0 warns about ops some ranks never submitted
 * @param stallShutdownTime    {@code KOLO_STALL_SHUTDOWN_TIME_SECONDS}: when such ops fail on every rank; zero = never.
 *                             {@code KOLO_STALL_CHECK_DISABLE=1} sets both to never
 * @param timeout              {@code KOLO_TIMEOUT_SECONDS}: default wait for a handle
 * @param smallMessageBytes    {@code KOLO_SMALL_ALLREDUCE_BYTES}: below this, allreduce uses the latency-optimal algorithm;
 *                             {@link FlatCollectives#AUTO} (unset) scales it with the number of ranks
 * @param algorithms           {@code KOLO_HIERARCHICAL_ALLREDUCE} and {@code KOLO_HIERARCHICAL_ALLGATHER}
 * @param compression          {@code KOLO_COMPRESSION}: compression of allreduces that name none
 * @param eagerAllreduceBytes  {@code KOLO_EAGER_ALLREDUCE_BYTES}: a cached allreduce, broadcast or allgather of at
 *                             most this many bytes travels with the negotiation that finds it ready everywhere (one
 *                             round of messages instead of two); 0 disables
 * @param dynamicProcessSets   {@code KOLO_DYNAMIC_PROCESS_SETS}: process sets may be added and removed after start
 * @param autotune             {@code KOLO_AUTOTUNE} and its companions: rank 0 tunes the fusion threshold and cycle time
 *                             while the job runs; null when off
 */
public record EngineSettings(long fusionThresholdBytes, Duration cycleTime, int cacheCapacity, Path timeline,
                             boolean markCycles, Duration stallCheckTime, Duration stallShutdownTime, Duration timeout,
                             long smallMessageBytes, AlgorithmSettings algorithms,
                             Compression compression, long eagerAllreduceBytes, boolean dynamicProcessSets,
                             AutotuneSettings autotune) {

    public static final long DEFAULT_FUSION_THRESHOLD = KoloSettings.FUSION_THRESHOLD.defaultValue();
    /** A stall check time that never comes (what {@code toNanos()} can still express). */
    private static final Duration NEVER = Duration.ofNanos(Long.MAX_VALUE);
    public static final long DEFAULT_EAGER_ALLREDUCE_BYTES = KoloSettings.EAGER_ALLREDUCE_BYTES.defaultValue();

    /** Horovod's defaults. */
    public static EngineSettings defaults() {
        return fromEnvironment(Map.of());
    }

    /** Reads the {@code KOLO_*} variables; a bad value is a {@link io.kolo.BadSettingException} naming the variable. */
    public static EngineSettings fromEnvironment(Map<String, String> env) {
        String timeline = KoloSettings.TIMELINE.from(env);
        boolean noStallCheck = KoloSettings.STALL_CHECK_DISABLE.from(env).equals("on");
        return new EngineSettings(KoloSettings.FUSION_THRESHOLD.from(env),
                Duration.ofNanos((long) (KoloSettings.CYCLE_TIME.from(env) * 1_000_000)),
                KoloSettings.CACHE_CAPACITY.from(env).intValue(), JobFiles.of(timeline, env),
                KoloSettings.TIMELINE_MARK_CYCLES.from(env).equals("on"),
                noStallCheck ? NEVER : seconds(KoloSettings.STALL_CHECK_TIME_SECONDS.from(env)),
                noStallCheck ? Duration.ZERO : seconds(KoloSettings.STALL_SHUTDOWN_TIME_SECONDS.from(env)),
                Duration.ofSeconds(KoloSettings.TIMEOUT_SECONDS.from(env)), KoloSettings.SMALL_ALLREDUCE_BYTES.from(env),
                AlgorithmSettings.fromEnvironment(env), Compression.fromEnvironment(env),
                KoloSettings.EAGER_ALLREDUCE_BYTES.from(env),
                KoloSettings.DYNAMIC_PROCESS_SETS.from(env).equals("on"), AutotuneSettings.fromEnvironment(env));
    }

    /**
     * The stall settings take any long of seconds, and the stall inspector counts in nanoseconds: past 292 years
     * ({@code toNanos()} would overflow and fail rank 0's first coordinator round) a value means never.
     */
    private static Duration seconds(long seconds) {
        return seconds >= NEVER.toSeconds() ? NEVER : Duration.ofSeconds(seconds);
    }
}
