package io.kolo.engine;

import io.kolo.bootstrap.LazyLogger;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The stall inspector's warnings from one look at the {@link MessageTable}: one per group of ops that the same ranks
 * submitted and the same ranks did not. A rank late for a step is one warning naming it, not one per gradient (a
 * model's hundreds of tensors flooded rank 0's stderr with hundreds).
 */
final class StallWarnings {
    /** Logged under the table's name, where the warnings have always come from. */
    private static final System.Logger LOG = LazyLogger.of(MessageTable.class);
    /** Ops a warning names; it counts the rest. */
    static final int NAMED = 5;

    private record Group(List<Integer> submitted, List<Integer> missing, List<String> ops, long[] oldestSeconds) {
    }

    private final String where;
    private final Map<String, Group> groups = new LinkedHashMap<>();

    /** @param where after an op's name in messages: which process set it belongs to ("" for the global set) */
    StallWarnings(String where) {
        this.where = where;
    }

    /** An op ({@code label 'name'}) that has waited {@code ageSeconds} for {@code missing}. */
    void add(String label, String name, List<Integer> submitted, List<Integer> missing, long ageSeconds) {
        Group g = groups.computeIfAbsent(submitted + "/" + missing,
                k -> new Group(submitted, missing, new ArrayList<>(), new long[1]));
        g.ops().add(label + " '" + name + "'");
        g.oldestSeconds()[0] = Math.max(g.oldestSeconds()[0], ageSeconds);
    }

    /** Logs one warning per group. */
    void log() {
        for (Group g : groups.values()) {
            LOG.log(System.Logger.Level.WARNING, message(g));
        }
        groups.clear();
    }

    private String message(Group g) {
        int n = g.ops().size();
        String head = n == 1 ? g.ops().getFirst() + where + " submitted by ranks " + g.submitted() + " has waited "
                : n + " ops" + where + " submitted by ranks " + g.submitted() + " have waited ";
        StringBuilder sb = new StringBuilder("Kolo stall: ").append(head).append(g.oldestSeconds()[0])
                .append(" s for ranks ").append(g.missing());
        if (n > 1) {
            sb.append(": ").append(String.join(", ", g.ops().subList(0, Math.min(n, NAMED))));
            if (n > NAMED) {
                sb.append(" and ").append(n - NAMED).append(" more");
            }
        }
        return sb.append(" (warning after KOLO_STALL_CHECK_TIME_SECONDS); the missing ranks have not called ")
                .append(n == 1 ? "it" : "them").append(" yet: they are still busy or hung, or call other ops (names and"
                        + " order must match on every rank)").toString();
    }
}
