package io.kolo.spark;

/**
 * Spark's "Job aborted due to stage failure: ..." (several lines, a stack trace inside) as one line: the first
 * failed rank's own line when Spark carried its exception back, else the first line of Spark's message.
 */
final class StageFailure {
    private StageFailure() {
    }

    static KoloSparkException explain(int numProc, Exception sparkError) {
        for (Throwable t = sparkError; t != null; t = t.getCause()) {
            if (t instanceof RankFailure) {
                return new KoloSparkException("Kolo job of " + numProc + " ranks on Spark failed: " + t.getMessage(),
                        sparkError);
            }
        }
        String message = String.valueOf(sparkError.getMessage());
        // A task's failure that Spark could not deserialize still carries the rank's line in the text.
        int at = message.indexOf("RankFailure: ");
        String line = at >= 0 ? message.substring(at + "RankFailure: ".length()) : message;
        line = line.strip().lines().findFirst().orElse(line);
        return new KoloSparkException("Kolo job of " + numProc + " ranks on Spark failed: " + line, sparkError);
    }
}
