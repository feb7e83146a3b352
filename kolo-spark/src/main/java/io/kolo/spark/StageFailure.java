package io.kolo.spark;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Spark's "Job aborted due to stage failure: ..." (several lines, a stack trace inside) as one line: the failed rank's
 * own line when Spark carried its exception or its text back, else Spark's reason without the stack trace
 * ("... ExecutorLostFailure (executor 0 exited ...) Reason: Command exited with code 137"), or which class Spark could
 * not serialize (a task's capture, a rank's result) without Spark's serialization stack.
 */
final class StageFailure {
    private static final String ABORTED = "Job aborted due to stage failure: ";
    private static final String RANK_FAILURE = RankTaskFailure.class.getName() + ": ";
    /** Spark's BarrierJobUnsupportedRDDChainException. */
    private static final String UNSUPPORTED_CHAIN = "[SPARK-24820][SPARK-24821]";
    private static final Pattern TASK_NOT_SERIALIZABLE = Pattern.compile(
            "Task not serializable: java\\.io\\.NotSerializableException: (\\S+)");
    private static final Pattern RESULT_NOT_SERIALIZABLE = Pattern.compile("had a not serializable result: (\\S+)");

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
        // Spark adds the whole "Serialization stack:" (Spark's and Kolo's own objects) to these; the class is enough.
        if (message.contains(UNSUPPORTED_CHAIN)) {
            // Spark's own text is about first()/take() and Python; what a Kolo user can change is the DataFrame.
            return "Spark's barrier mode cannot run a stage over this DataFrame as it is (a coalesce, or another step"
                    + " in the same stage, changes its number of partitions): pass numProc (KoloSpark.run(spark,"
                    + " data, numProc, task) repartitions it), or repartition it first";
        }
        Matcher task = TASK_NOT_SERIALIZABLE.matcher(message);
        if (task.find()) {
            return "the task cannot be sent to the executors: java.io.NotSerializableException: " + task.group(1)
                    + " (a KoloTask must capture only serializable values)";
        }
        Matcher result = RESULT_NOT_SERIALIZABLE.matcher(message);
        if (result.find()) {
            return "a rank's result cannot be sent to the driver: " + result.group(1) + " is not serializable (a"
                    + " KoloTask must return a serializable value)";
        }
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
