package io.kolo.launcher;

import io.kolo.bootstrap.KoloSettings;

import java.util.List;
import java.util.Map;

/**
 * Settings that do nothing without another: said before any rank starts, since the ranks ignore them without a word
 * (as Horovod's do) and the user, who asked for a file or a mark, would find none.
 */
final class UnusedSettings {
    private UnusedSettings() {
    }

    /** Adds a line to {@code warnings} for each setting of {@code exported} (every rank's) that does nothing. */
    static void warn(Map<String, String> exported, List<String> warnings) {
        String autotuneLog = exported.get(KoloSettings.AUTOTUNE_LOG.name());
        if (autotuneLog != null && !KoloSettings.AUTOTUNE.from(exported).equals("on")) {
            warnings.add("kolo: KOLO_AUTOTUNE_LOG=" + autotuneLog + " (--autotune-log-file) does nothing without"
                    + " --autotune (KOLO_AUTOTUNE=1): rank 0 writes that log only while it tunes");
        }
        if (KoloSettings.TIMELINE_MARK_CYCLES.from(exported).equals("on")
                && exported.get(KoloSettings.TIMELINE.name()) == null) {
            warnings.add("kolo: KOLO_TIMELINE_MARK_CYCLES=1 (--timeline-mark-cycles) does nothing without"
                    + " --timeline-filename (KOLO_TIMELINE): there is no timeline to mark the cycles in");
        }
    }
}
