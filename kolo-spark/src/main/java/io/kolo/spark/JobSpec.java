package io.kolo.spark;

import io.kolo.BadSettingException;
import io.kolo.bootstrap.JobSecret;
import io.kolo.bootstrap.KoloSettings;
import org.apache.spark.SparkConf;

import java.io.Serializable;
import java.time.Duration;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What the driver hands every rank of one run: a secret made for this run alone, and the {@code KOLO_*} settings the
 * ranks use (engine, transports, timeouts). Settings come from the driver's environment, overridden by
 * {@code spark.executorEnv.KOLO_*}, and are checked here, so a bad value fails before any task starts; placement and
 * rendezvous variables are left out, because the barrier stage decides those.
 */
record JobSpec(String runSecretHex, Map<String, String> settings) implements Serializable {
    private static final String EXECUTOR_ENV = "spark.executorEnv.";
    /** Decided by the barrier stage, never taken from the driver's environment (it may itself run under kolo run). */
    private static final Set<String> PLACEMENT = Set.of(KoloSettings.RANK.name(), KoloSettings.SIZE.name(),
            KoloSettings.LOCAL_RANK.name(), KoloSettings.LOCAL_SIZE.name(), KoloSettings.CROSS_RANK.name(),
            KoloSettings.CROSS_SIZE.name(), KoloSettings.HOSTNAME.name(), KoloSettings.RENDEZVOUS_ADDR.name(),
            KoloSettings.RENDEZVOUS_PORT.name(), KoloSettings.RENDEZVOUS_SERVER.name(), KoloSettings.SECRET.name());

    JobSpec {
        settings = Map.copyOf(settings);
    }

    /**
     * @throws BadSettingException naming the first bad {@code KOLO_*} value (all of them in the message)
     */
    static JobSpec forRun(SparkConf conf, Map<String, String> driverEnv) {
        Map<String, String> settings = new HashMap<>();
        driverEnv.forEach((k, v) -> {
            if (k.startsWith("KOLO_") && !PLACEMENT.contains(k)) {
                settings.put(k, v);
            }
        });
        for (scala.Tuple2<String, String> e : conf.getAllWithPrefix(EXECUTOR_ENV)) {
            if (e._1().startsWith("KOLO_") && !PLACEMENT.contains(e._1())) {
                settings.put(e._1(), e._2());
            }
        }
        List<String> problems = KoloSettings.problems(settings);
        if (!problems.isEmpty()) {
            String first = problems.getFirst();
            throw new BadSettingException(first.substring(0, first.indexOf('=')), String.join("; ", problems));
        }
        return new JobSpec(JobSecret.generate().toHex(), settings);
    }

    Duration startTimeout() {
        return Duration.ofSeconds(KoloSettings.START_TIMEOUT_SECONDS.from(settings));
    }

    /**
     * The secret of one attempt of the stage: a retry is a new job, and a rank left over from an earlier attempt
     * cannot join it.
     */
    JobSecret secretFor(int stageId, int stageAttempt) {
        byte[] mac = JobSecret.fromHex(runSecretHex).mac(("kolo-spark stage " + stageId + " attempt " + stageAttempt)
                .getBytes(java.nio.charset.StandardCharsets.UTF_8));
        return JobSecret.fromHex(HexFormat.of().formatHex(mac));
    }

    @Override
    public String toString() {
        return "JobSpec[settings=" + settings + ", secret not shown]";
    }
}
