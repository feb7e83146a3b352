package io.kolo.engine;

import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Where a submitted op waits: at its response-cache position, when the cached response answers it (the fast path:
 * the cycle's vote runs it once every rank has it ready), or in the list for the next coordinator round (a new name,
 * or a request that changed, which also marks the cached response invalid in the vote).
 */
final class Admission {
    /** A cached op not ready everywhere within this time goes to the coordinator, where stalls are seen. */
    private static final long CACHE_GRACE_NANOS = TimeUnit.SECONDS.toNanos(1);

    private final ResponseCache cache;
    private final CachePositionWaits parked;
    private final CycleVote vote;
    private final List<Op> toSend;
    /** This rank in the set: an allgather's or alltoall's cached answer is checked at this rank's rows or splits. */
    private final int rank;

    Admission(ResponseCache cache, CachePositionWaits parked, CycleVote vote, List<Op> toSend, int rank) {
        this.rank = rank;
        this.cache = cache;
        this.parked = parked;
        this.vote = vote;
        this.toSend = toSend;
    }

    void admit(Op op) {
        int p = cache.position(op.name);
        if (p >= 0 && cache.get(p).answers(op, rank) && parked.get(p) == null) {
            parked.park(p, op);
        } else {
            if (p >= 0) {
                vote.invalidate(p);
            }
            toSend.add(op);
        }
    }

    /** Ops parked longer than the grace time go to the coordinator, which sees who never submitted them. */
    void expire(long now) {
        for (int p = parked.next(0); p >= 0; p = parked.next(p + 1)) {
            if (now - parked.get(p).submittedNanos > CACHE_GRACE_NANOS) {
                toSend.add(parked.remove(p));
            }
        }
    }

    /** Cached responses some rank found stale are erased everywhere; ops parked on them go to the coordinator. */
    void eraseInvalid(int high) {
        for (int p = 0; p < high; p++) {
            if (!vote.validEverywhere(p)) {
                cache.erase(p);
                Op op = parked.remove(p);
                if (op != null) {
                    toSend.add(op);
                }
            }
        }
    }

    /**
     * Moves the responses of the parked ops that every rank has ready into {@code ready}; returns how many. With a
     * joined rank, which has no cache bits, every parked op goes to the coordinator, which accounts for its zeros.
     */
    int takeReady(boolean anyJoined, List<Response> ready) {
        int taken = 0;
        for (int p = parked.next(0); p >= 0; p = parked.next(p + 1)) {
            if (anyJoined) {
                toSend.add(parked.remove(p));
            } else if (vote.readyEverywhere(p)) {
                ready.add(cache.get(p));
                parked.remove(p);
                taken++;
                // A repeat: likely to come again. Fresh names (unnamed ops get a new one each time) never displace it.
                cache.markRepeated(p);
            }
        }
        return taken;
    }

    /** After the cache changed, ops parked on a position that now holds something else go the slow way. */
    void revalidate() {
        for (int p = parked.next(0); p >= 0; p = parked.next(p + 1)) {
            Op op = parked.get(p);
            if (cache.position(op.name) != p || !cache.get(p).answers(op, rank)) {
                toSend.add(parked.remove(p));
            }
        }
    }
}
