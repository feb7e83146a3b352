package io.kolo.engine;

import io.kolo.collective.CollectiveOps;

import java.lang.foreign.MemorySegment;

/**
 * The cycle's eager op (see {@link CycleVote}): the response cache's repeated small allreduce, broadcast or allgather,
 * waiting here as a parked op, or armed by a caller that runs the cycle itself ({@link DirectOp}). Its payload rides
 * with the vote ({@link EagerPayload}); when every rank's was real, its result is read from there. Touched only by the
 * thread running the cycle.
 */
final class EagerExchange {
    private final ResponseCache cache;
    private final Admission admission;
    private final CycleVote vote;
    private final DirectOp direct;
    private final Execution execution;
    private final EngineTuning tuning;
    /** This cycle's: the eager entry's position (or -1), and its op here, parked or direct (or neither). */
    private int position = -1;
    private Op op;
    private MemorySegment directPayload;

    EagerExchange(ResponseCache cache, Admission admission, CycleVote vote, DirectOp direct,
                  Execution execution, EngineTuning tuning) {
        this.cache = cache;
        this.admission = admission;
        this.vote = vote;
        this.direct = direct;
        this.execution = execution;
        this.tuning = tuning;
    }

    /** The vote's exchange (its bits already filled), with this rank's eager payload when it has one. */
    void exchange(CollectiveOps ops) {
        // The eager op depends only on state every rank shares, and the cache drops the mark when the entry changes,
        // so the payload always fits the space reserved for it after the bit vector.
        position = cache.repeated();
        op = position >= 0 ? admission.parkedAt(position) : null;
        // A direct op holds its name's claim, so no op of that name is parked: one of the two at most.
        directPayload = position >= 0 ? direct.payloadAt(position) : null;
        if (directPayload != null) {
            vote.markReady(position);
        }
        if (position < 0) {
            vote.exchange(ops);
            return;
        }
        Response r = cache.get(position);
        MemorySegment payload = op != null ? op.input : directPayload;
        if (payload != null) {
            EagerPayload.place(r, execution.rank(), payload, vote.bits(), vote.payloadAt());
        }
        vote.exchange(ops, r);
    }

    /** After the exchange: finishes this rank's eager op if every rank's payload was real; whether it did. */
    boolean finish(boolean anyJoined) {
        Op parkedOp = op;
        MemorySegment directMemory = directPayload;
        op = null;
        directPayload = null;
        if ((parkedOp == null && directMemory == null) || anyJoined || !vote.readyEverywhere(position)
                || !vote.validEverywhere(position)) {
            return false;
        }
        if (parkedOp != null) {
            admission.ranEagerly(position);
        }
        // The cache's own entry at the position: no name is looked up.
        Response r = cache.get(position);
        long negotiated = execution.trace().clock();
        if (parkedOp == null) {
            EagerPayload.deliver(r, direct.output(), vote.bits(), vote.payloadAt(), execution.rank(), execution.size());
            execution.outcomes().countCompleted(r.names().getFirst(), directMemory.byteSize(), direct.armedNanos());
            direct.completed();
        } else if (EagerPayload.deliver(r, parkedOp, vote.bits(), vote.payloadAt(), execution)) {
            execution.done(r, parkedOp, negotiated, execution.trace().clock());
        }
        tuning.ran(r.totalBytes());
        cache.touch(position);
        return true;
    }
}
