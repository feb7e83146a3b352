package io.kolo.spark;

import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Spark refuses barrier stages under dynamic allocation; KoloSpark.run says so, and what to set, before submitting. */
class DynamicAllocationTest {

    @Test
    void dynamicAllocationFailsAtOnceNamingTheSetting() {
        // No executor is ever needed: with dynamic allocation and no initial executors none starts.
        SparkSession spark = SparkClusters.localCluster(1, 1, 1024, Map.of(
                "spark.dynamicAllocation.enabled", "true",
                "spark.dynamicAllocation.shuffleTracking.enabled", "true",
                "spark.dynamicAllocation.minExecutors", "0",
                "spark.dynamicAllocation.initialExecutors", "0"));
        try {
            long start = System.nanoTime();
            KoloSparkException e = assertThrows(KoloSparkException.class, () -> KoloSpark.run(spark, 1, c -> 0));
            assertTrue(e.getMessage().contains("set spark.dynamicAllocation.enabled=false"), e.getMessage());
            assertTrue(System.nanoTime() - start < 5_000_000_000L, "at once");
        } finally {
            spark.stop();
        }
    }
}
