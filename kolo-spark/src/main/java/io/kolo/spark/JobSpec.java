package io.kolo.spark;

import io.kolo.BadSettingException;
import io.kolo.launch.JobSecret;
import io.kolo.launch.WorkerEnvironment;
import org.apache.spark.SparkConf;

import java.io.Serializable;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

/**
 * What the driver hands every rank of one run: a secret made for this run alone, the {@code KOLO_*} settings the
 * ranks use (engine, transports, timeouts), and the Spark application's name and id, which name the job in its view.
 * Settings come from the driver's environment, overridden by {@code spark.executorEnv.KOLO_*}, and are checked here,
 * so a bad value fails before any task starts; placement and rendezvous variables are left out, because the barrier
 * stage decides those.
 *
 * @param application "Spark application NAME (ID)", as the Spark UI names it
 */
record JobSpec(String runSecretHex, Map<String, String> settings, String application) implements Serializable {
    private static final String EXECUTOR_ENV = "spark.executorEnv.";
    private static final String JOB_NAME = "KOLO_JOB_NAME";

    JobSpec {
        settings = Map.copyOf(settings);
    }

    /**
     * @throws KoloSparkException naming the first bad {@code KOLO_*} value (all of them in the message), its cause
     *                             the {@link BadSettingException}: every failure of {@code run} is a KoloSparkException
     */
    static JobSpec forRun(SparkConf conf, Map<String, String> driverEnv) {
        return forRun(conf, driverEnv, Map.of());
    }

    /** As {@link #forRun(SparkConf, Map)}, with {@code options} (a run's own {@code KOLO_*} settings) over both. */
    static JobSpec forRun(SparkConf conf, Map<String, String> driverEnv, Map<String, String> options) {
        Map<String, String> merged = new HashMap<>(driverEnv);
        for (scala.Tuple2<String, String> e : conf.getAllWithPrefix(EXECUTOR_ENV)) {
            merged.put(e._1(), e._2());
        }
        merged.putAll(options);
        try {
            // Placement is never taken from either: the driver may itself run under kolo run.
            return new JobSpec(JobSecret.generate().toHex(), WorkerEnvironment.settingsFrom(merged),
                    "Spark application " + conf.get("spark.app.name", "(unnamed)")
                            + conf.getOption("spark.app.id").map(id -> " (" + id + ")").getOrElse(() -> ""));
        } catch (BadSettingException e) {
            throw new KoloSparkException(e.getMessage(), e);
        }
    }

    /**
     * The settings of the ranks of one attempt of the stage: these, and the job's name in its view (the header of the
     * page and report, {@code command} in {@code /api/job}), which a Spark user finds in the Spark UI: the application
     * and the stage, unless the run names it ({@code KOLO_JOB_NAME}). The executor's command line, the view's default,
     * says nothing of the job.
     */
    Map<String, String> settingsFor(int stageId, int stageAttempt) {
        if (settings.containsKey(JOB_NAME)) {
            return settings;
        }
        Map<String, String> named = new HashMap<>(settings);
        named.put(JOB_NAME, application + ", stage " + stageId + (stageAttempt > 0 ? " (attempt " + stageAttempt + ")"
                : ""));
        return named;
    }

    Duration startTimeout() {
        return WorkerEnvironment.startTimeout(settings);
    }

    /**
     * The secret of one attempt of the stage: a retry is a new job, and a rank left over from an earlier attempt
     * cannot join it.
     */
    JobSecret secretFor(int stageId, int stageAttempt) {
        return JobSecret.fromHex(runSecretHex).derive("kolo-spark stage " + stageId + " attempt " + stageAttempt);
    }

    @Override
    public String toString() {
        return "JobSpec[settings=" + settings + ", secret not shown]";
    }
}
