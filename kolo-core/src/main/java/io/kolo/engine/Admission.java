package io.kolo.engine;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Where every drained op of a process set waits until it runs or fails, and the one owner of those waits: at its
 * response-cache position, when the cached response answers it (the fast path: the cycle's vote runs it once every
 * rank has it ready), or in the list for the next coordinator round (a new name, a request that changed, which also
 * marks the cached response invalid in the vote, a join, or a cached op that waited too long). Every move between the
 * two, and out of both, is a method here; the vote, the eager exchange, autotuning and the coordinator round ask.
 * Touched only by the thread running the cycle.
 */
final class Admission {
    /** A cached op not ready everywhere within this time goes to the coordinator, where stalls are seen. */
    private static final long CACHE_GRACE_NANOS = TimeUnit.SECONDS.toNanos(1);

    private final ResponseCache cache;
    private final CycleVote vote;
    /** Ops waiting at their cache position, one per position. */
    private final CachePositionWaits parked;
    /** Ops for the next coordinator round, in the order they came. */
    private final List<Op> toSend = new ArrayList<>();
    /** {@link #takeRequests}'s list, reused every round. */
    private final List<Request> requests = new ArrayList<>();
    /** This rank in the set: an allgather's cached answer is checked at this rank's rows. */
    private final int rank;

    Admission(ResponseCache cache, CycleVote vote, int capacity, int rank) {
        this.rank = rank;
        this.cache = cache;
        this.vote = vote;
        this.parked = new CachePositionWaits(capacity);
    }

    /** A drained op: parked when the cache answers it (and its position is free), else sent to the coordinator. */
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

    /** A join: it is never cached, the coordinator accounts for the joined rank. */
    void admitJoin(Op op) {
        toSend.add(op);
    }

    /** Whether this rank has requests for the coordinator (else the vote says "nothing new" for it). */
    boolean hasRequests() {
        return !toSend.isEmpty();
    }

    /** Fills the cycle's vote with {@code flags} and a ready bit per parked position below {@code high}. */
    void fillVote(long flags, int high) {
        vote.fill(flags, high, parked);
    }

    /** The op parked at position {@code p}, or null (the eager exchange reads its payload). */
    Op parkedAt(int p) {
        return parked.get(p);
    }

    /** The op parked at {@code p} ran in the vote's own exchange (the eager op): it waits no more. */
    void ranEagerly(int p) {
        parked.remove(p);
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

    /** The cache is switched off (autotuning, on every rank alike): every parked op goes the slow way. */
    void unparkAll() {
        for (int p = parked.next(0); p >= 0; p = parked.next(p + 1)) {
            toSend.add(parked.remove(p));
        }
    }

    /**
     * The requests of the ops for this round's coordinator, which no longer wait here: the round's answer decides
     * them. The list is reused by the next call.
     */
    List<Request> takeRequests() {
        requests.clear();
        for (int i = 0; i < toSend.size(); i++) {
            requests.add(toSend.get(i).request(rank));
        }
        toSend.clear();
        return requests;
    }

    /** {@code op} failed (the coordinator's error for its name): it waits nowhere any more. */
    void withdraw(Op op) {
        toSend.remove(op);
        parked.remove(op);
    }

    /**
     * The set ends: nothing waits any more. Returns the ops that waited for the coordinator (the parked ones are all
     * pending, and fail from there).
     */
    List<Op> dropAll() {
        List<Op> sent = new ArrayList<>(toSend);
        toSend.clear();
        parked.clear();
        return sent;
    }
}
