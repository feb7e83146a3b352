package io.kolo.spark;

import io.kolo.ReduceOp;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** KoloSpark.run on local[3]: every rank a task thread of this JVM, each with its own Communicator. */
class LocalModeRunTest {
    private static SparkSession spark;

    @BeforeAll
    static void start() {
        spark = SparkClusters.local(3, Map.of("spark.executorEnv.KOLO_START_TIMEOUT_SECONDS", "2"));
    }

    @AfterAll
    static void stop() {
        if (spark != null) {
            spark.stop();
        }
    }

    @Test
    void twoAndThreeRanksAllreduceExactlyAndReturnInRankOrder() {
        for (int np : new int[]{2, 3}) {
            List<long[]> out = KoloSpark.run(spark, np, comm -> {
                long[] x = {comm.rank() + 1, 1L << 40};
                comm.allreduce(x, ReduceOp.SUM);
                return new long[]{comm.rank(), comm.size(), comm.localRank(), comm.localSize(), comm.crossSize(),
                        x[0], x[1]};
            });
            assertEquals(np, out.size());
            for (int r = 0; r < np; r++) {
                long[] o = out.get(r);
                assertEquals(List.of((long) r, (long) np, (long) r, (long) np, 1L, (long) np * (np + 1) / 2,
                        np * (1L << 40)), java.util.Arrays.stream(o).boxed().toList(), "rank " + r + " of " + np);
            }
        }
    }

    @Test
    void eachRankReadsItsOwnPartitionOfADataFrame() {
        Dataset<Row> df = spark.range(1000).toDF("v");
        List<long[]> out = KoloSpark.run(spark, df, 3, (comm, rows) -> {
            long[] sumAndCount = new long[2];
            rows.forEachRemaining(r -> {
                sumAndCount[0] += r.getLong(0);
                sumAndCount[1]++;
            });
            long mine = sumAndCount[1];
            comm.allreduce(sumAndCount, ReduceOp.SUM);
            return new long[]{mine, sumAndCount[0], sumAndCount[1]};
        });
        long rows = 0;
        for (long[] o : out) {
            assertTrue(o[0] > 0, "every rank has rows: " + o[0]);
            assertEquals(999L * 1000 / 2, o[1]);
            assertEquals(1000, o[2]);
            rows += o[0];
        }
        assertEquals(1000, rows);
    }

    @Test
    void aThrowingRankFailsTheJobNamingItsRankAndException() {
        long start = System.nanoTime();
        KoloSparkException e = assertThrows(KoloSparkException.class, () -> KoloSpark.run(spark, 3, comm -> {
            float[] x = new float[1024];
            comm.allreduce(x, ReduceOp.SUM);
            if (comm.rank() == 1) {
                throw new IllegalStateException("bad batch 7");
            }
            for (int i = 0; i < 1000; i++) {
                comm.allreduce(x, ReduceOp.SUM);
            }
            return "done";
        }));
        assertTrue(e.getMessage().startsWith("Kolo job of 3 ranks on Spark failed: rank 1 of 3 failed:"
                + " IllegalStateException: bad batch 7"), e.getMessage());
        assertTrue(System.nanoTime() - start < 30_000_000_000L, "fails fast");
    }

    @Test
    void moreRanksThanTaskSlotsFailWithinTheStartTimeoutNamingBothNumbers() {
        long start = System.nanoTime();
        KoloSparkException e = assertThrows(KoloSparkException.class, () -> KoloSpark.run(spark, 4, comm -> 0));
        assertTrue(e.getMessage().startsWith("numProc=4 needs 4 task slots at once"), e.getMessage());
        assertTrue(e.getMessage().contains("the cluster has 3 after 2 s (KOLO_START_TIMEOUT_SECONDS)"), e.getMessage());
        assertTrue(e.getMessage().contains("spark.executor.cores"), e.getMessage());
        assertTrue(System.nanoTime() - start < 10_000_000_000L, "within the start timeout");
    }

    /** The lambda captures what Spark cannot send to the executors: one line naming the class, not Spark's trace. */
    @Test
    void aTaskCapturingSomethingNotSerializableIsOneLineNamingIt() {
        Thread notSerializable = Thread.currentThread();
        KoloSparkException e = assertThrows(KoloSparkException.class,
                () -> KoloSpark.run(spark, 2, comm -> notSerializable.getName()));
        assertEquals("Kolo job of 2 ranks on Spark failed: the task cannot be sent to the executors:"
                + " java.io.NotSerializableException: java.lang.Thread (a KoloTask must capture only serializable"
                + " values)", e.getMessage());
    }

    @Test
    void aResultThatIsNotSerializableIsOneLineNamingIt() {
        KoloSparkException e = assertThrows(KoloSparkException.class, () -> KoloSpark.run(spark, 2, comm -> new Object()));
        assertEquals("Kolo job of 2 ranks on Spark failed: a rank's result cannot be sent to the driver:"
                + " java.lang.Object is not serializable (a KoloTask must return a serializable value)", e.getMessage());
    }

    @Test
    void noTaskOrNoRanksIsOneLineNamingIt() {
        assertEquals("numProc must be at least 1, not 0", assertThrows(IllegalArgumentException.class,
                () -> KoloSpark.run(spark, 0, comm -> 0)).getMessage());
        assertEquals("task must not be null: the KoloTask each rank runs", assertThrows(NullPointerException.class,
                () -> KoloSpark.run(spark, 2, (KoloTask<Integer>) null)).getMessage());
        assertEquals("task must not be null: the KoloPartitionTask each rank runs",
                assertThrows(NullPointerException.class, () -> KoloSpark.run(spark, spark.range(4).toDF(), 2,
                        (KoloPartitionTask<Integer>) null)).getMessage());
    }

    /** One rank per partition of a DataFrame without partitions would be no rank at all: the task never runs. */
    @Test
    void aDataFrameWithoutPartitionsIsRefusedRatherThanRunOnNoRanks() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> KoloSpark.run(spark, spark.emptyDataFrame(), (comm, rows) -> comm.rank()));
        assertEquals("the DataFrame has no partitions, so there would be no rank to run the task: pass numProc"
                + " (KoloSpark.run(spark, data, numProc, task) repartitions it)", e.getMessage());
    }

    /** Spark's barrier mode refuses a stage over a coalesce: say how to run such a DataFrame, not how to fix take(). */
    @Test
    void aDataFrameWhoseLineageBarrierModeRefusesGetsOneLineSayingWhatToDo() {
        Dataset<Row> coalesced = spark.range(0, 100, 1, 3).toDF("v").coalesce(2);
        KoloSparkException e = assertThrows(KoloSparkException.class,
                () -> KoloSpark.run(spark, coalesced, (comm, rows) -> comm.rank()));
        assertEquals("Kolo job of 2 ranks on Spark failed: Spark's barrier mode cannot run a stage over this"
                + " DataFrame as it is (a coalesce, or another step in the same stage, changes its number of"
                + " partitions): pass numProc"
                + " (KoloSpark.run(spark, data, numProc, task) repartitions it), or repartition it first",
                e.getMessage());
        assertEquals(List.of(0, 1), KoloSpark.run(spark, coalesced, 2, (comm, rows) -> comm.rank()));
    }

    /** Without numProc the ranks are the DataFrame's partitions: the advice must not be to lower a numProc not given. */
    @Test
    void morePartitionsThanTaskSlotsNameThePartitionsAndSayToPassNumProc() {
        KoloSparkException e = assertThrows(KoloSparkException.class,
                () -> KoloSpark.run(spark, spark.range(0, 100, 1, 4).toDF("v"), (comm, rows) -> comm.rank()));
        assertEquals("the DataFrame's 4 partitions (one rank each) need 4 task slots at once (a barrier stage starts"
                + " all its tasks together) but the cluster has 3 after 2 s (KOLO_START_TIMEOUT_SECONDS): pass numProc"
                + " of at most 3 (KoloSpark.run(spark, data, numProc, task) repartitions it), or give Spark more"
                + " executors or cores (spark.executor.instances, spark.executor.cores; each task takes"
                + " spark.task.cpus)", e.getMessage());
    }

    @Test
    void theSessionStillWorksAfterAFailedJob() {
        assertThrows(KoloSparkException.class, () -> KoloSpark.run(spark, 2, comm -> {
            throw new java.io.IOException("disk full");
        }));
        assertEquals(List.of(2, 2), KoloSpark.run(spark, 2, comm -> comm.size()));
    }
}
