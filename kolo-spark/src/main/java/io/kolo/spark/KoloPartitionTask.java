package io.kolo.spark;

import io.kolo.Communicator;
import org.apache.spark.sql.Row;

import java.io.Serializable;
import java.util.Iterator;

/**
 * What each rank of a {@link KoloSpark#run(org.apache.spark.sql.SparkSession, org.apache.spark.sql.Dataset, int,
 * KoloPartitionTask)} job does with its partition of the data: rank {@code r} receives the rows of partition {@code r},
 * read where they lie, with no copy through a store.
 *
 * <pre>{@code
 * List<Long> counts = KoloSpark.run(spark, df, 2, (comm, rows) -> {
 *     long[] n = {0};
 *     rows.forEachRemaining(r -> n[0]++);
 *     comm.allreduce(n, ReduceOp.SUM);
 *     return n[0];                          // the whole DataFrame's row count, on every rank
 * });
 * }</pre>
 *
 * @param <R> what a rank returns to the driver (serializable)
 */
@FunctionalInterface
public interface KoloPartitionTask<R> extends Serializable {
    /** Runs on one rank; {@code rows} may be read once. Throwing fails the job on every rank. */
    R call(Communicator comm, Iterator<Row> rows) throws Exception;
}
