package io.kolo.engine;

import io.kolo.bootstrap.KoloSettings;

import java.nio.file.Path;
import java.util.Map;

/**
 * {@code KOLO_AUTOTUNE=1} and its companions, as Horovod's: how many samples to discard while the job warms up, how
 * many cycles that ran ops make one sample, how many samples Bayesian optimisation may take, where the CSV log goes,
 * and which settings the user fixed (those are not tuned).
 */
public record AutotuneSettings(int warmupSamples, int stepsPerSample, int maxSamples, Path log,
                               boolean tuneFusionThreshold, boolean tuneCycleTime, boolean tuneCache,
                               boolean tuneHierarchicalAllreduce, boolean tuneHierarchicalAllgather) {

    /** Null when {@code KOLO_AUTOTUNE} is off. */
    static AutotuneSettings fromEnvironment(Map<String, String> env) {
        if (!KoloSettings.AUTOTUNE.from(env).equals("on")) {
            return null;
        }
        String log = KoloSettings.AUTOTUNE_LOG.from(env);
        return new AutotuneSettings(KoloSettings.AUTOTUNE_WARMUP_SAMPLES.from(env).intValue(),
                KoloSettings.AUTOTUNE_STEPS_PER_SAMPLE.from(env).intValue(),
                KoloSettings.AUTOTUNE_BAYES_OPT_MAX_SAMPLES.from(env).intValue(), JobFiles.of(log, env),
                KoloSettings.FUSION_THRESHOLD.ifSet(env).isEmpty(), KoloSettings.CYCLE_TIME.ifSet(env).isEmpty(),
                KoloSettings.CACHE_CAPACITY.ifSet(env).isEmpty(), KoloSettings.HIERARCHICAL_ALLREDUCE.ifSet(env).isEmpty(),
                KoloSettings.HIERARCHICAL_ALLGATHER.ifSet(env).isEmpty());
    }

    /**
     * What this job can tune: the cache only when it has capacity, the hierarchy only where the ranks are spread evenly
     * over several hosts.
     */
    AutotuneSettings forJob(boolean cacheExists, boolean hierarchyAvailable) {
        return new AutotuneSettings(warmupSamples, stepsPerSample, maxSamples, log, tuneFusionThreshold, tuneCycleTime,
                tuneCache && cacheExists, tuneHierarchicalAllreduce && hierarchyAvailable,
                tuneHierarchicalAllgather && hierarchyAvailable);
    }

    /** Whether anything is left to tune. */
    boolean tunesAnything() {
        return tuneFusionThreshold || tuneCycleTime || tuneCache || tuneHierarchicalAllreduce || tuneHierarchicalAllgather;
    }
}
