package io.kolo.engine;

import io.kolo.DataType;
import io.kolo.ReduceOp;

import java.lang.foreign.MemorySegment;

/**
 * A blocking small allreduce, broadcast or allgather that its caller's thread runs as the eager payload of one cycle,
 * with no {@link Op} (see {@link Engine#allreduceNow}): its name's claim, its memory and the cache position it
 * answers, for the one cycle its caller runs. Touched only by the thread holding the cycle.
 */
final class DirectOp {
    private final ResponseCache cache;
    private final InFlightNames inFlight;
    /** This rank in the set: an allgather's cached answer is checked at this rank's rows. */
    private final int rank;
    private MemorySegment input;
    private MemorySegment output;
    private int position = -1;
    private InFlightNames.Slot slot;
    private boolean done;
    /** When the caller armed it: the op's start, for the engine's figures. */
    private long armedNanos;
    /** The last name that matched, as the caller passed it, and the cache entry it matched. */
    private String lastName;
    private Response lastMatched;

    DirectOp(ResponseCache cache, InFlightNames inFlight, int rank) {
        this.cache = cache;
        this.inFlight = inFlight;
        this.rank = rank;
    }

    /**
     * Takes the allreduce for the next cycle if the cache's eager entry answers it exactly and its name is free; false
     * otherwise (the caller then submits it as an op, which says what is wrong, if anything).
     */
    boolean armAllreduce(String name, DataType type, long[] shape, MemorySegment memory, ReduceOp op,
                         double prescale, double postscale) {
        int p = eager(name);
        return p >= 0 && cache.get(p).answersAllreduce(type, op, shape, prescale, postscale) && !memory.isReadOnly()
                && claim(p, name, memory, memory);
    }

    /** {@link #armAllreduce} for a broadcast from {@code root} in {@code memory}. */
    boolean armBroadcast(String name, DataType type, long[] shape, MemorySegment memory, int root) {
        int p = eager(name);
        return p >= 0 && cache.get(p).answersBroadcast(type, shape, root) && (rank == root || !memory.isReadOnly())
                && claim(p, name, memory, memory);
    }

    /**
     * {@link #armAllreduce} for an allgather of {@code input} into {@code output}, which the caller has checked is of
     * the type and writable: it must hold exactly the gathered result.
     */
    boolean armAllgather(String name, DataType type, long[] shape, MemorySegment input, MemorySegment output) {
        int p = eager(name);
        if (p < 0) {
            return false;
        }
        Response r = cache.get(p);
        return r.answersAllgather(type, shape, rank) && output.byteSize() == EagerPayload.gatheredBytes(r)
                && claim(p, name, input, output);
    }

    /** The cache's eager entry's position if it is {@code name}'s, else -1. */
    private int eager(String name) {
        int p = cache.repeated();
        return p >= 0 && sameName(cache.get(p), name) ? p : -1;
    }

    private boolean claim(int p, String name, MemorySegment in, MemorySegment out) {
        InFlightNames.Slot s = inFlight.claim(name);
        if (s == null) {
            return false;
        }
        slot = s;
        position = p;
        input = in;
        output = out;
        done = false;
        armedNanos = System.nanoTime();
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
        return p == position ? input : null;
    }

    /** Where the armed op's result goes. */
    MemorySegment output() {
        return output;
    }

    /** When the armed op was armed, in {@link System#nanoTime()} terms. */
    long armedNanos() {
        return armedNanos;
    }

    /** The cycle ran the op on every rank and wrote the result. */
    void completed() {
        done = true;
    }

    /** After the cycle: frees the name (kept for its next op); whether the op completed. */
    boolean disarm() {
        inFlight.release(slot, true);
        slot = null;
        input = null;
        output = null;
        position = -1;
        return done;
    }
}
