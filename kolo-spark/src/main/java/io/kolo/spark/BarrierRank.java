package io.kolo.spark;

import io.kolo.Communicator;
import org.apache.spark.BarrierTaskContext;
import scala.jdk.javaapi.CollectionConverters;
import scala.runtime.AbstractFunction1;

import java.io.Serializable;
import java.util.List;
import java.util.Iterator;

/**
 * The function each barrier task runs: join the job, run the user's work on this rank's rows, and leave. A rank whose
 * work throws aborts the job first, so that the other ranks fail at once naming it rather than at their timeout;
 * ranks that succeed wait for each other before leaving, because rank 0's task serves the store they all use.
 *
 * @param <T> the partition's element type
 * @param <R> what the rank returns
 */
final class BarrierRank<T, R> extends AbstractFunction1<scala.collection.Iterator<T>, scala.collection.Iterator<RankResult<R>>>
        implements Serializable {
    private static final long serialVersionUID = 1L;

    /** The user's work on one rank. */
    interface Work<T, R> extends Serializable {
        R run(Communicator comm, Iterator<T> rows) throws Exception;
    }

    private final JobSpec spec;
    private final Work<T, R> work;

    BarrierRank(JobSpec spec, Work<T, R> work) {
        this.spec = spec;
        this.work = work;
    }

    @Override
    public scala.collection.Iterator<RankResult<R>> apply(scala.collection.Iterator<T> rows) {
        BarrierTaskContext ctx = BarrierTaskContext.get();
        int rank = ctx.partitionId();
        int size = ctx.numPartitions();
        JoinedRank joined;
        try {
            joined = JoinedRank.join(ctx, spec);
        } catch (RuntimeException e) {
            throw new RankTaskFailure(rank, size, e);
        }
        R result;
        try (joined) {
            try {
                result = work.run(joined.comm(), CollectionConverters.asJava(rows));
            } catch (Throwable e) {
                joined.comm().abort(e);
                throw new RankTaskFailure(rank, size, e);
            }
            // Kolo's barrier, not Spark's: Spark's barrier() answers on a one-second poll, so it would cost every job
            // about a second; Kolo's is one small collective among ranks already connected.
            joined.comm().barrier();
        }
        return CollectionConverters.asScala(List.of(new RankResult<>(rank, result)).iterator());
    }
}
