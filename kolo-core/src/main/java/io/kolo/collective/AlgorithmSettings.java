package io.kolo.collective;

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

    /** Reads the variables; a bad value is an IllegalArgumentException naming the variable. */
    public static AlgorithmSettings fromEnvironment(Map<String, String> env) {
        return new AlgorithmSettings(mode(env, "KOLO_HIERARCHICAL_ALLREDUCE", Mode.AUTO),
                mode(env, "KOLO_HIERARCHICAL_ALLGATHER", Mode.OFF));
    }

    private static Mode mode(Map<String, String> env, String name, Mode fallback) {
        String v = env.get(name);
        if (v == null || v.isBlank()) {
            return fallback;
        }
        return switch (v.trim().toLowerCase(Locale.ROOT)) {
            case "1", "true", "on", "yes" -> Mode.ON;
            case "0", "false", "off", "no" -> Mode.OFF;
            case "auto" -> Mode.AUTO;
            default -> throw new IllegalArgumentException(name + "='" + v + "' is not 0, 1 or auto");
        };
    }
}
