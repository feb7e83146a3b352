package io.kolo.launcher;

import io.kolo.launcher.job.UsageException;
import io.kolo.BadSettingException;
import io.kolo.bootstrap.KoloSettings;
import picocli.CommandLine.Option;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code horovodrun}'s options, translated into the {@code KOLO_*} settings that mean the same, so a horovodrun
 * command line runs with {@code horovodrun} replaced by {@code kolo run}. A bad value is refused as the setting
 * refuses it, naming the flag.
 */
final class HorovodrunOptions {
    @Option(names = "--fusion-threshold-mb", paramLabel = "MB",
            description = "Largest fused buffer in MiB (KOLO_FUSION_THRESHOLD; 0 disables fusion).")
    String fusionThresholdMb;

    @Option(names = "--cycle-time-ms", paramLabel = "MS", description = "Engine cycle time (KOLO_CYCLE_TIME).")
    String cycleTimeMs;

    @Option(names = "--cache-capacity", paramLabel = "N", description = "Response-cache entries (KOLO_CACHE_CAPACITY).")
    String cacheCapacity;

    @Option(names = "--disable-cache", description = "No response cache (KOLO_CACHE_CAPACITY=0).")
    boolean disableCache;

    @Option(names = "--hierarchical-allreduce", description = "KOLO_HIERARCHICAL_ALLREDUCE=1.")
    boolean hierarchicalAllreduce;

    @Option(names = "--no-hierarchical-allreduce", description = "KOLO_HIERARCHICAL_ALLREDUCE=0.")
    boolean noHierarchicalAllreduce;

    @Option(names = "--hierarchical-allgather", description = "KOLO_HIERARCHICAL_ALLGATHER=1.")
    boolean hierarchicalAllgather;

    @Option(names = "--no-hierarchical-allgather", description = "KOLO_HIERARCHICAL_ALLGATHER=0.")
    boolean noHierarchicalAllgather;

    @Option(names = "--timeline-filename", paramLabel = "FILE",
            description = "Rank 0 writes a Chrome-trace timeline here (KOLO_TIMELINE).")
    String timelineFilename;

    @Option(names = "--timeline-mark-cycles", description = "Mark each cycle in the timeline (KOLO_TIMELINE_MARK_CYCLES).")
    boolean timelineMarkCycles;

    @Option(names = "--stall-check-warning-time-seconds", paramLabel = "S",
            description = "Warn about ops some ranks never submitted (KOLO_STALL_CHECK_TIME_SECONDS).")
    String stallWarning;

    @Option(names = "--stall-check-shutdown-time-seconds", paramLabel = "S",
            description = "Fail such ops on every rank (KOLO_STALL_SHUTDOWN_TIME_SECONDS).")
    String stallShutdown;

    @Option(names = "--no-stall-check", description = "No stall warnings or shutdown (KOLO_STALL_CHECK_DISABLE=1).")
    boolean noStallCheck;

    @Option(names = "--autotune", description = "Tune the fusion threshold, cycle time, response cache and"
            + " hierarchical allreduce/allgather while the job runs (KOLO_AUTOTUNE=1).")
    boolean autotune;

    @Option(names = "--autotune-log-file", paramLabel = "FILE",
            description = "Rank 0 writes every autotune sample here, as CSV (KOLO_AUTOTUNE_LOG).")
    String autotuneLogFile;

    @Option(names = "--autotune-warmup-samples", paramLabel = "N",
            description = "Autotune samples discarded at start (KOLO_AUTOTUNE_WARMUP_SAMPLES).")
    String autotuneWarmupSamples;

    @Option(names = "--autotune-steps-per-sample", paramLabel = "N",
            description = "Cycles that ran ops per autotune sample (KOLO_AUTOTUNE_STEPS_PER_SAMPLE).")
    String autotuneStepsPerSample;

    @Option(names = "--autotune-bayes-opt-max-samples", paramLabel = "N",
            description = "Autotune samples after which the best settings stay (KOLO_AUTOTUNE_BAYES_OPT_MAX_SAMPLES).")
    String autotuneMaxSamples;

    @Option(names = "--log-level", paramLabel = "LEVEL",
            description = "TRACE, DEBUG, INFO, WARNING, ERROR or FATAL (KOLO_LOG_LEVEL).")
    String logLevel;

    @Option(names = "--network-interfaces", paramLabel = "NICS",
            description = "As --network-interface; of a comma-separated list the first is used.")
    String networkInterfaces;

    @Option(names = "--gloo", description = "Accepted: Kolo has one runtime.")
    boolean gloo;

    @Option(names = "--mpi", description = "Accepted: Kolo has one runtime.")
    boolean mpi;

    /** The settings these flags stand for, each checked as its {@code KOLO_*} variable is. */
    Map<String, String> settings() {
        Map<String, String> kolo = new LinkedHashMap<>();
        if (fusionThresholdMb != null) {
            double mb;
            try {
                mb = Double.parseDouble(fusionThresholdMb.strip());
            } catch (NumberFormatException e) {
                mb = -1;
            }
            if (!(mb >= 0 && mb <= Long.MAX_VALUE / (1L << 20))) {
                throw new UsageException("--fusion-threshold-mb " + fusionThresholdMb + ": expected a non-negative number"
                        + " of MiB, 0 disables fusion (" + KoloSettings.FUSION_THRESHOLD.name() + ")");
            }
            kolo.put(KoloSettings.FUSION_THRESHOLD.name(), Long.toString(Math.round(mb * (1 << 20))));
        }
        put(kolo, "--cycle-time-ms", cycleTimeMs, KoloSettings.CYCLE_TIME, cycleTimeMs);
        put(kolo, "--cache-capacity", cacheCapacity, KoloSettings.CACHE_CAPACITY, cacheCapacity);
        if (disableCache) {
            if (cacheCapacity != null) {
                throw new UsageException("use either --disable-cache or --cache-capacity, not both");
            }
            kolo.put(KoloSettings.CACHE_CAPACITY.name(), "0");
        }
        flag(kolo, "--hierarchical-allreduce", hierarchicalAllreduce, noHierarchicalAllreduce,
                KoloSettings.HIERARCHICAL_ALLREDUCE);
        flag(kolo, "--hierarchical-allgather", hierarchicalAllgather, noHierarchicalAllgather,
                KoloSettings.HIERARCHICAL_ALLGATHER);
        put(kolo, "--timeline-filename", timelineFilename, KoloSettings.TIMELINE, timelineFilename);
        if (timelineMarkCycles) {
            kolo.put(KoloSettings.TIMELINE_MARK_CYCLES.name(), "1");
        }
        put(kolo, "--stall-check-warning-time-seconds", stallWarning, KoloSettings.STALL_CHECK_TIME_SECONDS,
                stallWarning);
        put(kolo, "--stall-check-shutdown-time-seconds", stallShutdown, KoloSettings.STALL_SHUTDOWN_TIME_SECONDS,
                stallShutdown);
        if (noStallCheck) {
            kolo.put(KoloSettings.STALL_CHECK_DISABLE.name(), "1");
        }
        if (autotune) {
            kolo.put(KoloSettings.AUTOTUNE.name(), "1");
        }
        put(kolo, "--autotune-log-file", autotuneLogFile, KoloSettings.AUTOTUNE_LOG, autotuneLogFile);
        put(kolo, "--autotune-warmup-samples", autotuneWarmupSamples, KoloSettings.AUTOTUNE_WARMUP_SAMPLES,
                autotuneWarmupSamples);
        put(kolo, "--autotune-steps-per-sample", autotuneStepsPerSample, KoloSettings.AUTOTUNE_STEPS_PER_SAMPLE,
                autotuneStepsPerSample);
        put(kolo, "--autotune-bayes-opt-max-samples", autotuneMaxSamples,
                KoloSettings.AUTOTUNE_BAYES_OPT_MAX_SAMPLES, autotuneMaxSamples);
        put(kolo, "--log-level", logLevel, KoloSettings.LOG_LEVEL, logLevel);
        return kolo;
    }

    /** The first of --network-interfaces, or null. */
    String networkInterface() {
        if (networkInterfaces == null) {
            return null;
        }
        String first = networkInterfaces.split(",")[0].strip();
        if (first.isEmpty()) {
            throw new UsageException("--network-interfaces '" + networkInterfaces + "': name an interface, e.g. eth0");
        }
        return first;
    }

    /** One line for each accepted flag that changes nothing here, for --verbose. */
    List<String> ignored() {
        List<String> lines = new ArrayList<>();
        if (gloo || mpi) {
            lines.add("kolo: --" + (gloo ? "gloo" : "mpi") + " ignored: Kolo has one runtime, its own");
        }
        if (networkInterfaces != null && networkInterfaces.contains(",")) {
            lines.add("kolo: --network-interfaces " + networkInterfaces + ": Kolo uses one interface, "
                    + networkInterface());
        }
        return lines;
    }

    private static void put(Map<String, String> kolo, String flag, String given, KoloSettings.Setting<?> setting,
                            String value) {
        if (given == null) {
            return;
        }
        try {
            if (setting.ifSet(Map.of(setting.name(), value)).isEmpty()) {
                throw new BadSettingException(setting.name(), "empty");
            }
        } catch (BadSettingException e) {
            throw new UsageException(flag + " " + given + ": expected " + setting.expected() + " ("
                    + setting.name() + ")");
        }
        kolo.put(setting.name(), value.strip());
    }

    private static void flag(Map<String, String> kolo, String flag, boolean on, boolean off,
                             KoloSettings.Setting<?> setting) {
        if (on && off) {
            throw new UsageException("use either " + flag + " or --no-" + flag.substring(2) + ", not both");
        }
        if (on || off) {
            kolo.put(setting.name(), on ? "1" : "0");
        }
    }
}
