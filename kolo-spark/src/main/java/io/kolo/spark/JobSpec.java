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
 * What the driver hands every rank of one run: a secret made for this run alone, and the {@code KOLO_*} settings the
 * ranks use (engine, transports, timeouts). Settings come from the driver's environment, overridden by
 * {@code spark.executorEnv.KOLO_*}, and are checked here, so a bad value fails before any task starts; placement and
 * rendezvous variables are left out, because the barrier stage decides those.
 */
record JobSpec(String runSecretHex, Map<String, String> settings) implements Serializable {
    private static final String EXECUTOR_ENV = "spark.executorEnv.";

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
            return new JobSpec(JobSecret.generate().toHex(), WorkerEnvironment.settingsFrom(merged));
        } catch (BadSettingException e) {
            throw new KoloSparkException(e.getMessage(), e);
        }
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
