package io.kolo.spark;

import io.kolo.ReduceOp;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** KoloSpark.run on Spark's real local-cluster master: ranks in executor JVMs of their own. */
class LocalClusterRunTest {
    private static SparkSession spark;

    @BeforeAll
    static void start() {
        spark = SparkClusters.localCluster(2, 2, 1024, Map.of(
                "spark.executorEnv.KOLO_START_TIMEOUT_SECONDS", "20",
                "spark.stage.maxConsecutiveAttempts", "2"));
    }

    @AfterAll
    static void stop() {
        if (spark != null) {
            spark.stop();
        }
    }

    @Test
    void threeRanksAllreduceExactlyAndReturnInRankOrder() {
        List<String> out = KoloSpark.run(spark, 3, comm -> {
            double[] x = {comm.rank() + 1, 0.5};
            comm.allreduce(x, ReduceOp.SUM);
            return comm.rank() + "/" + comm.size() + " " + x[0] + " " + x[1] + " pid " + ProcessHandle.current().pid();
        });
        System.out.println(out);
        for (int r = 0; r < 3; r++) {
            assertEquals(r + "/3 6.0 1.5", out.get(r).substring(0, out.get(r).indexOf(" pid")));
        }
    }
}
