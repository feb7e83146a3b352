package io.kolo.engine;

import io.kolo.collective.CollectiveOps;
import io.kolo.collective.Scratch;

/**
 * What every {@link OpExecutor} works with: the collectives (which pick the algorithm), this rank's pending ops by
 * name, the fusion buffer and a scratch buffer (both reused, so the steady state allocates nothing), the trace, how
 * ops end, and the process set's ranks in the job and its id, for messages that name a rank as the user knows it.
 * Touched only by the thread running the cycle.
 *
 * @param members the set's ranks in the job, by set rank
 * @param set     the process set's id (0: every rank)
 */
record Execution(CollectiveOps ops, PendingOps pending, Scratch fusion, Scratch scratch, OpTrace trace,
                 Outcomes outcomes, int[] members, int set) {

    int rank() {
        return ops.rank();
    }

    int size() {
        return ops.size();
    }

    /** After an op's name in messages: which process set it belongs to ("" for the global set). */
    String where() {
        return set == 0 ? "" : " in process set " + set;
    }

    /** An executor for every kind of op but JOIN, whose completion is the engine's own. */
    java.util.Map<OpKind, OpExecutor> executors() {
        java.util.Map<OpKind, OpExecutor> all = new java.util.EnumMap<>(OpKind.class);
        all.put(OpKind.ALLREDUCE, new AllreduceExecutor(this));
        all.put(OpKind.BROADCAST, new BroadcastExecutor(this));
        all.put(OpKind.ALLGATHER, new AllgatherExecutor(this));
        all.put(OpKind.ALLTOALL, new AlltoallExecutor(this));
        all.put(OpKind.REDUCESCATTER, new ReducescatterExecutor(this));
        all.put(OpKind.BARRIER, (r, negotiated) -> {
            ops.barrier();
            outcomes.finish(r);
        });
        return all;
    }

    /** Records the op's spans and completes it: the collective ran. */
    void done(Response r, long negotiated, long t0, long t1, long t2, boolean direct) {
        trace.spans(r, pending, negotiated, t0, t1, t2, direct);
        outcomes.finish(r);
    }

    /** {@link #done} for a single-name response whose op is at hand, run straight from where it lies. */
    void done(Response r, Op op, long negotiated, long end) {
        trace.spans(r, pending, negotiated, negotiated, negotiated, end, true);
        outcomes.finish(op);
    }
}
