package io.kolo.spark;

import io.kolo.BadSettingException;
import org.apache.spark.SparkConf;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** What the driver hands the ranks: settings from its environment and spark.executorEnv, a secret per attempt. */
class JobSpecTest {

    @Test
    void executorEnvOverridesTheDriversEnvironmentAndPlacementIsNeverTaken() {
        SparkConf conf = new SparkConf(false)
                .set("spark.executorEnv.KOLO_START_TIMEOUT_SECONDS", "7")
                .set("spark.executorEnv.KOLO_RANK", "3")
                .set("spark.executorEnv.OTHER", "x");
        JobSpec spec = JobSpec.forRun(conf, Map.of("KOLO_START_TIMEOUT_SECONDS", "90", "KOLO_CYCLE_TIME", "2",
                "KOLO_SECRET", "00112233445566778899aabbccddeeff", "KOLO_RENDEZVOUS_PORT", "29500", "PATH", "/bin"));
        assertEquals(Map.of("KOLO_START_TIMEOUT_SECONDS", "7", "KOLO_CYCLE_TIME", "2"), spec.settings());
        assertEquals(Duration.ofSeconds(7), spec.startTimeout());
        assertFalse(spec.toString().contains(spec.runSecretHex()), "the secret is not shown");
    }

    @Test
    void aBadSettingFailsOnTheDriverNamingIt() {
        SparkConf conf = new SparkConf(false).set("spark.executorEnv.KOLO_TIMEOUT_SECONDS", "soon");
        KoloSparkException e = assertThrows(KoloSparkException.class, () -> JobSpec.forRun(conf, Map.of()));
        assertTrue(e.getMessage().startsWith("KOLO_TIMEOUT_SECONDS='soon' is invalid"), e.getMessage());
        assertTrue(e.getCause() instanceof BadSettingException, String.valueOf(e.getCause()));
    }

    @Test
    void everyRunAndEveryStageAttemptHasItsOwnSecret() {
        JobSpec a = JobSpec.forRun(new SparkConf(false), Map.of());
        JobSpec b = JobSpec.forRun(new SparkConf(false), Map.of());
        assertNotEquals(a.runSecretHex(), b.runSecretHex());
        assertEquals(a.secretFor(3, 0).toHex(), a.secretFor(3, 0).toHex());
        assertNotEquals(a.secretFor(3, 0).toHex(), a.secretFor(3, 1).toHex());
        assertNotEquals(a.secretFor(3, 0).toHex(), a.secretFor(4, 0).toHex());
    }

    /**
     * The job view under Spark showed the executor's command line (a java command of CoarseGrainedExecutorBackend) as
     * the job; the ranks are now told the application and the stage, unless the run names the job itself.
     */
    @Test
    void theRanksNameTheJobByTheSparkApplicationAndStage() {
        SparkConf conf = new SparkConf(false).set("spark.app.name", "nightly-train").set("spark.app.id", "app-42");
        JobSpec spec = JobSpec.forRun(conf, Map.of());
        assertEquals("Spark application nightly-train (app-42), stage 7", spec.settingsFor(7, 0).get("KOLO_JOB_NAME"));
        assertEquals("Spark application nightly-train (app-42), stage 7 (attempt 1)",
                spec.settingsFor(7, 1).get("KOLO_JOB_NAME"));
        assertFalse(spec.settings().containsKey("KOLO_JOB_NAME"), "the stage is the task's to say");
        JobSpec named = JobSpec.forRun(conf, Map.of(), Map.of("KOLO_JOB_NAME", "my job"));
        assertEquals("my job", named.settingsFor(7, 0).get("KOLO_JOB_NAME"));
    }
}
