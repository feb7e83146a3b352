package io.kolo.collective;

import io.kolo.bootstrap.KoloSettings;

import java.util.Locale;
import java.util.Map;

/**
 * Which algorithm families the collectives may use, read from {@code KOLO_*} variables. Every rank must use the
 * same settings; {@link Hierarchy#agree} checks that when the job starts.
 *
 * @param hierarchicalAllreduce {@code KOLO_HIERARCHICAL_ALLREDUCE}: unset = {@link Mode#AUTO} (hierarchical when
 *                              several hosts each run the same number of ranks, more than one), {@code 1} or
 *                              {@code 0}
 * @param hierarchicalAllgather {@code KOLO_HIERARCHICAL_ALLGATHER}: unset = {@link Mode#OFF} as in Horovod
 */
public record AlgorithmSettings(Mode hierarchicalAllreduce, Mode hierarchicalAllgather) {

    /** Whether a hierarchical algorithm is used. */
    public enum Mode {
        /** Whenever the topology allows it. */
        AUTO,
        /** Asked for explicitly; a topology that does not allow it falls back to flat with a warning. */
        ON,
        /** Never. */
        OFF
    }

    public AlgorithmSettings {
        java.util.Objects.requireNonNull(hierarchicalAllreduce, "hierarchicalAllreduce");
        java.util.Objects.requireNonNull(hierarchicalAllgather, "hierarchicalAllgather");
    }

    public static AlgorithmSettings defaults() {
        return new AlgorithmSettings(Mode.AUTO, Mode.OFF);
    }

    /** Reads the variables; a bad value is a {@link io.kolo.BadSettingException} naming the variable. */
    public static AlgorithmSettings fromEnvironment(Map<String, String> env) {
        return new AlgorithmSettings(mode(KoloSettings.HIERARCHICAL_ALLREDUCE.from(env)),
                mode(KoloSettings.HIERARCHICAL_ALLGATHER.from(env)));
    }

    private static Mode mode(String canonical) {
        return Mode.valueOf(canonical.toUpperCase(Locale.ROOT));
    }
}
