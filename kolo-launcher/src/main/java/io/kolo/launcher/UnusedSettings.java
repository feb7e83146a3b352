package io.kolo.launcher;

import io.kolo.bootstrap.KoloSettings;

import java.util.List;
import java.util.Map;

/**
 * Settings that do nothing without another: said before any rank starts, since the ranks ignore them without a word
 * (as Horovod's do) and the user, who asked for a file or a mark, would find none.
 */
final class UnusedSettings {
    /** One of the autotuner's own settings, with the horovodrun flag that sets it. */
    private record Knob(KoloSettings.Setting<?> setting, String flag) {
    }

    private static final List<Knob> AUTOTUNE_KNOBS = List.of(
            new Knob(KoloSettings.AUTOTUNE_WARMUP_SAMPLES, "--autotune-warmup-samples"),
            new Knob(KoloSettings.AUTOTUNE_STEPS_PER_SAMPLE, "--autotune-steps-per-sample"),
            new Knob(KoloSettings.AUTOTUNE_BAYES_OPT_MAX_SAMPLES, "--autotune-bayes-opt-max-samples"));

    private UnusedSettings() {
    }

    /** Adds a line to {@code warnings} for each setting of {@code exported} (every rank's) that does nothing. */
    static void warn(Map<String, String> exported, List<String> warnings) {
        boolean autotune = KoloSettings.AUTOTUNE.from(exported).equals("on");
        String autotuneLog = exported.get(KoloSettings.AUTOTUNE_LOG.name());
        if (autotuneLog != null && !autotune) {
            warnings.add("kolo: KOLO_AUTOTUNE_LOG=" + autotuneLog + " (--autotune-log-file) does nothing without"
                    + " --autotune (KOLO_AUTOTUNE=1): rank 0 writes that log only while it tunes");
        }
        for (Knob knob : AUTOTUNE_KNOBS) {
            String value = exported.get(knob.setting().name());
            if (value != null && !autotune) {
                warnings.add("kolo: " + knob.setting().name() + "=" + value + " (" + knob.flag() + ") does nothing"
                        + " without --autotune (KOLO_AUTOTUNE=1): it only shapes the tuning");
            }
        }
        if (KoloSettings.TIMELINE_MARK_CYCLES.from(exported).equals("on")
                && exported.get(KoloSettings.TIMELINE.name()) == null) {
            warnings.add("kolo: KOLO_TIMELINE_MARK_CYCLES=1 (--timeline-mark-cycles) does nothing without"
                    + " --timeline-filename (KOLO_TIMELINE): there is no timeline to mark the cycles in");
        }
    }
}
