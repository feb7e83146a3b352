package io.kolo.spark;

import java.util.ArrayList;
import java.util.List;

/**
 * Spark's "Job aborted due to stage failure: ..." (several lines, a stack trace inside) as one line: the failed rank's
 * own line when Spark carried its exception or its text back, else Spark's reason without the stack trace
 * ("... ExecutorLostFailure (executor 0 exited ...) Reason: Command exited with code 137").
 */
final class StageFailure {
    private static final String ABORTED = "Job aborted due to stage failure: ";
    private static final String RANK_FAILURE = RankTaskFailure.class.getName() + ": ";

    private StageFailure() {
    }

    static KoloSparkException explain(int numProc, Exception sparkError) {
        return new KoloSparkException("Kolo job of " + numProc + " ranks on Spark failed: " + line(sparkError),
                sparkError);
    }

    private static String line(Exception sparkError) {
        for (Throwable t = sparkError; t != null; t = t.getCause()) {
            if (t instanceof RankTaskFailure) {
                return t.getMessage();
            }
        }
        String message = String.valueOf(sparkError.getMessage());
        int at = message.indexOf(RANK_FAILURE);
        if (at >= 0) {
            return message.substring(at + RANK_FAILURE.length()).lines().findFirst().orElse("").strip();
        }
        List<String> reason = new ArrayList<>();
        for (String l : message.replace(ABORTED, "").lines().toList()) {
            if (l.strip().startsWith("at ")) {
                break;
            }
            if (!l.isBlank()) {
                reason.add(l.strip());
            }
        }
        return String.join(" ", reason);
    }
}
