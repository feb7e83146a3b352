package io.kolo;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A process-set call one rank refuses (it lacks {@code KOLO_DYNAMIC_PROCESS_SETS=1}, or was handed a set it cannot
 * use), as it travels in the registration's exchange: refused only there, the call left the other ranks waiting for
 * that rank's request until {@code KOLO_TIMEOUT_SECONDS}. Sent instead of the request, it makes every rank fail with
 * one message naming each refusing rank and why.
 *
 * <p>A refusal's words: {@code {REFUSED, call, reason, set id}}, the rest of the request zero.
 */
final class ProcessSetRefusal {
    /** A request's first word when the call was refused; 0 and 1 are adding and removing. */
    static final long REFUSED = 2;

    enum Call {
        ADD("addProcessSet"), REMOVE("removeProcessSet"), INIT("Kolo.init(ProcessSet...)");

        final String label;

        Call(String label) {
            this.label = label;
        }
    }

    enum Reason {
        NOT_DYNAMIC(true, "KOLO_DYNAMIC_PROCESS_SETS=1 is not set there: process sets can be added or removed after"
                + " Kolo.init only when the job sets it on every rank (or pass them to Kolo.init(ProcessSet...))"),
        GLOBAL(false, "the global process set (every rank) cannot be removed"),
        ENDED(false, "the set belongs to a job that has ended (Kolo.shutdown(), or an elastic reset): register it with"
                + " this one first"),
        NOT_REGISTERED(false, "the set is not registered with that rank's communicator (pass it to Kolo.init or"
                + " Communicator.addProcessSet on every rank first)"),
        REMOVED(false, "the set was removed"),
        ALREADY_REGISTERED(false, "the ProcessSet object is already registered (register a set once; several ranks"
                + " in one JVM each need their own ProcessSet)");

        /** Whether the refusing rank throws IllegalStateException (its settings) rather than IllegalArgumentException. */
        final boolean state;
        final String why;

        Reason(boolean state, String why) {
            this.state = state;
            this.why = why;
        }
    }

    private ProcessSetRefusal() {
    }

    /** This rank's refusal, as its request of {@code length} words. */
    static long[] encode(Call call, Reason reason, int setId, int length) {
        long[] e = new long[length];
        e[0] = REFUSED;
        e[1] = call.ordinal();
        e[2] = reason.ordinal();
        e[3] = setId;
        return e;
    }

    /**
     * Null when no rank refused; else what every rank throws: the refusing ranks their own kind of exception (an
     * IllegalStateException for a setting, IllegalArgumentException for a set they cannot use), the others a
     * KoloException, each with the same message.
     */
    static RuntimeException of(long[][] answers, int rank) {
        Map<String, List<Integer>> byWhat = new LinkedHashMap<>();
        Reason mine = null;
        for (int r = 0; r < answers.length; r++) {
            if (answers[r][0] == REFUSED) {
                Call call = Call.values()[(int) answers[r][1]];
                Reason reason = Reason.values()[(int) answers[r][2]];
                String what = call.label + " was refused on rank%s: " + (reason == Reason.REMOVED
                        ? "process set " + answers[r][3] + " was removed" : reason.why);
                byWhat.computeIfAbsent(what, w -> new ArrayList<>()).add(r);
                if (r == rank) {
                    mine = reason;
                }
            }
        }
        if (byWhat.isEmpty()) {
            return null;
        }
        List<String> parts = new ArrayList<>();
        for (Map.Entry<String, List<Integer>> e : byWhat.entrySet()) {
            parts.add(e.getKey().formatted(ranks(e.getValue())));
        }
        String message = String.join("; ", parts) + "; no rank's process sets changed";
        return mine == null ? new KoloException(message)
                : mine.state ? new IllegalStateException(message) : new IllegalArgumentException(message);
    }

    private static String ranks(List<Integer> ranks) {
        StringBuilder sb = new StringBuilder(ranks.size() == 1 ? " " : "s ");
        for (int i = 0; i < ranks.size(); i++) {
            sb.append(i == 0 ? "" : i == ranks.size() - 1 ? " and " : ", ").append(ranks.get(i));
        }
        return sb.toString();
    }
}
