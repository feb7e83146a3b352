package io.kolo.engine;

import io.kolo.DataType;
import io.kolo.ReduceOp;

import java.lang.foreign.MemorySegment;

/**
 * A blocking small allreduce that its caller's thread runs as the eager payload of one cycle, with no {@link Op}
 * (see {@link Engine#allreduceNow}): its name's claim, its memory and the cache position it answers, for the one cycle
 * its caller runs. Touched only by the thread holding the cycle.
 */
final class DirectAllreduce {
    private final ResponseCache cache;
    private final InFlightNames inFlight;
    private MemorySegment data;
    private int position = -1;
    private InFlightNames.Slot slot;
    private boolean done;
    /** The last name that matched, as the caller passed it, and the cache entry it matched. */
    private String lastName;
    private Response lastMatched;

    DirectAllreduce(ResponseCache cache, InFlightNames inFlight) {
        this.cache = cache;
        this.inFlight = inFlight;
    }

    /**
     * Takes the op for the next cycle if the cache's eager entry answers it exactly and its name is free; false
     * otherwise (the caller then submits it as an op, which says what is wrong, if anything).
     */
    boolean arm(String name, DataType type, long[] shape, MemorySegment memory, ReduceOp op, double prescale,
                double postscale) {
        int p = cache.repeated();
        if (p < 0) {
            return false;
        }
        Response r = cache.get(p);
        if (!r.answersAllreduce(type, op, shape, prescale, postscale) || !sameName(r, name) || memory.isReadOnly()) {
            return false;
        }
        InFlightNames.Slot s = inFlight.claim(name);
        if (s == null) {
            return false;
        }
        slot = s;
        data = memory;
        position = p;
        done = false;
        return true;
    }

    /**
     * Whether {@code name} is {@code r}'s: the caller's string is usually the one it passed last time, and the entry the
     * same object, so the characters are compared once, not on every call.
     */
    private boolean sameName(Response r, String name) {
        if (name == lastName && r == lastMatched) {
            return true;
        }
        if (!r.names().getFirst().equals(name)) {
            return false;
        }
        lastName = name;
        lastMatched = r;
        return true;
    }

    /** This rank's payload when position {@code p} is the armed op's, else null. */
    MemorySegment payloadAt(int p) {
        return p == position ? data : null;
    }

    /** The cycle reduced the payload of every rank and wrote the result. */
    void completed() {
        done = true;
    }

    /** After the cycle: frees the name (kept for its next op); whether the op completed. */
    boolean disarm() {
        inFlight.release(slot, true);
        slot = null;
        data = null;
        position = -1;
        return done;
    }
}
