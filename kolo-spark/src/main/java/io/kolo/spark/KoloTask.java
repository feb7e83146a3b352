package io.kolo.spark;

import io.kolo.Communicator;

import java.io.Serializable;

/**
 * What each rank of a {@link KoloSpark#run(org.apache.spark.sql.SparkSession, int, KoloTask)} job does, given its
 * membership in the job. Spark ships it to the executors, so it must be serializable (a lambda is, when what it
 * captures is).
 *
 * <pre>{@code
 * List<Float> sums = KoloSpark.run(spark, 4, comm -> {
 *     float[] x = {comm.rank()};
 *     comm.allreduce(x, ReduceOp.SUM);
 *     return x[0];                          // 6.0 from every rank
 * });
 * }</pre>
 *
 * @param <R> what a rank returns to the driver (serializable)
 */
@FunctionalInterface
public interface KoloTask<R> extends Serializable {
    /**
     * Runs on one rank. The communicator is closed when this returns or throws; throwing fails the job on every rank.
     */
    R call(Communicator comm) throws Exception;
}
