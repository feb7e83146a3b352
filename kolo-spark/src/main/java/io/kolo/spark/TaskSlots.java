package io.kolo.spark;

import org.apache.spark.SparkContext;

import java.time.Duration;

/**
 * Whether the cluster can run a barrier stage of {@code numProc} tasks, checked before it is submitted. Spark runs a
 * barrier stage's tasks all at once or not at all, and its own check retries for minutes before it gives up; executors
 * of a fresh application may still be registering, so this waits up to the start timeout for enough slots.
 */
final class TaskSlots {
    private TaskSlots() {
    }

    /** @param numProcGiven false when the ranks are a DataFrame's partitions as they are (no numProc was passed) */
    static void require(SparkContext sc, int numProc, Duration timeout, boolean numProcGiven) {
        if (!sc.isLocal() && sc.conf().getBoolean("spark.dynamicAllocation.enabled", false)) {
            throw new KoloSparkException("Kolo runs its ranks as one Spark barrier stage, which Spark refuses under"
                    + " dynamic allocation (spark.dynamicAllocation.enabled=true): set spark.dynamicAllocation.enabled"
                    + "=false and a fixed number of executors (spark.executor.instances)", null);
        }
        long deadline = System.nanoTime() + timeout.toNanos();
        int slots = slots(sc);
        while (slots < numProc) {
            if (System.nanoTime() > deadline) {
                String what = numProcGiven ? "numProc=" + numProc + " needs"
                        : "the DataFrame's " + numProc + " partitions (one rank each) need";
                String fewer = numProcGiven ? "lower numProc to at most " + slots : "pass numProc of at most " + slots
                        + " (KoloSpark.run(spark, data, numProc, task) repartitions it)";
                throw new KoloSparkException(what + " " + numProc + " task slots at once (a barrier stage starts all"
                        + " its tasks together) but the cluster has " + slots + " after " + timeout.toSeconds()
                        + " s (KOLO_START_TIMEOUT_SECONDS): " + fewer + ", or give Spark more executors or cores"
                        + " (spark.executor.instances, spark.executor.cores; each task takes spark.task.cpus)", null);
            }
            try {
                Thread.sleep(100);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new KoloSparkException("interrupted while waiting for " + numProc + " task slots", e);
            }
            slots = slots(sc);
        }
    }

    /** The count Spark's own barrier check uses: every executor's cores over the cores a task takes. */
    static int slots(SparkContext sc) {
        return sc.maxNumConcurrentTasks(sc.resourceProfileManager().defaultResourceProfile());
    }
}
