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
                               boolean tuneFusionThreshold, boolean tuneCycleTime) {

    /** Null when {@code KOLO_AUTOTUNE} is off. */
    static AutotuneSettings fromEnvironment(Map<String, String> env) {
        if (!KoloSettings.AUTOTUNE.from(env).equals("on")) {
            return null;
        }
        String log = KoloSettings.AUTOTUNE_LOG.from(env);
        return new AutotuneSettings(KoloSettings.AUTOTUNE_WARMUP_SAMPLES.from(env).intValue(),
                KoloSettings.AUTOTUNE_STEPS_PER_SAMPLE.from(env).intValue(),
                KoloSettings.AUTOTUNE_BAYES_OPT_MAX_SAMPLES.from(env).intValue(), log == null ? null : Path.of(log),
                KoloSettings.FUSION_THRESHOLD.ifSet(env).isEmpty(), KoloSettings.CYCLE_TIME.ifSet(env).isEmpty());
    }

    /** Whether anything is left to tune. */
    boolean tunesAnything() {
        return tuneFusionThreshold || tuneCycleTime;
    }
}
