package io.kolo.engine;

import java.util.HashMap;
import java.util.Map;

/**
 * Responses of recently executed single-name ops, by position. Every rank applies the same updates in the
 * same order (they all execute the same responses), so positions agree across ranks and a bit per position
 * is enough for ranks to agree that an op is ready everywhere, without a coordinator round trip.
 * Least-recently executed entries are evicted first; ties go to the lowest position, so eviction is
 * deterministic too.
 */
final class ResponseCache {
    private final Response[] entries;
    private final long[] lastUsed;
    private final Map<String, Integer> positions = new HashMap<>();
    /**
     * Allreduces, broadcasts and allgathers of at most this many bytes ({@link EagerPayload#fits}) may become the
     * {@linkplain #repeated() repeated} one.
     */
    private final long repeatedMaxBytes;
    private int repeated = -1;
    /**
     * The repeated op's name, for other threads: a blocking caller asks it, without taking the cycle, whether its op
     * may be the one ({@link #mayBeRepeated}). Written whenever the mark changes.
     */
    private volatile String repeatedName;
    private long clock;
    /** One past the highest position ever filled; positions are filled lowest-free-first, so this stays compact. */
    private int highWater;
    private boolean enabled = true;

    ResponseCache(int capacity, long repeatedMaxBytes) {
        entries = new Response[capacity];
        lastUsed = new long[capacity];
        this.repeatedMaxBytes = repeatedMaxBytes;
    }

    /**
     * The autotuner turns the cache off and on, at the same cycle on every rank. Off, it holds nothing and answers
     * nothing, so every op goes through the coordinator; positions and the high-water mark stay as they were, the same
     * on every rank.
     */
    void setEnabled(boolean on) {
        if (!on) {
            for (int p = 0; p < highWater; p++) {
                erase(p);
            }
        }
        enabled = on;
    }

    boolean enabled() {
        return enabled;
    }

    int capacity() {
        return entries.length;
    }

    /** Positions at or above this have never held a response (identical on every rank, like the positions). */
    int highWater() {
        return highWater;
    }

    /** Position of the cached response for this name, or -1. */
    int position(String name) {
        Integer p = positions.get(name);
        return p == null ? -1 : p;
    }

    Response get(int position) {
        return entries[position];
    }

    /** Records an executed single-name response, or refreshes it. */
    void put(Response response) {
        if (!enabled || entries.length == 0 || response.isError() || response.names().size() != 1 || !cacheable(response)) {
            return;
        }
        String name = response.names().getFirst();
        int p = position(name);
        if (p < 0) {
            p = freeOrOldest();
            if (entries[p] != null) {
                positions.remove(entries[p].names().getFirst());
            }
            positions.put(name, p);
            forgetRepeated(p);
        } else if (!fitsRepeated(response)) {
            // The name's request changed (a larger tensor, another type or op): its payload no longer fits.
            forgetRepeated(p);
        }
        entries[p] = response;
        touch(p);
        highWater = Math.max(highWater, p + 1);
    }

    /**
     * The entry at {@code position} ran again: the last to be evicted now ({@link #put} of the same entry does no
     * more).
     */
    void touch(int position) {
        lastUsed[position] = ++clock;
    }

    void erase(int position) {
        forgetRepeated(position);
        if (entries[position] != null) {
            positions.remove(entries[position].names().getFirst());
            entries[position] = null;
        }
    }

    /**
     * Marks the op at {@code position}, which just ran from the cache, as the one likely to repeat (the engine sends
     * its payload with each cycle's vote), if it is of a kind that can ride with the vote and small enough; the mark
     * goes whenever the entry at that position is replaced or erased, so it always names such an op of at most
     * {@code repeatedMaxBytes}.
     */
    void markRepeated(int position) {
        if (fitsRepeated(entries[position])) {
            setRepeated(position);
        }
    }

    private void setRepeated(int position) {
        if (repeated != position) {
            repeated = position;
            repeatedName = position < 0 ? null : entries[position].names().getFirst();
        }
    }

    /**
     * Whether {@code name} may be the repeated op's, asked from any thread without the cycle: false means it is not
     * now; true, that the cycle's own check is worth making.
     */
    boolean mayBeRepeated(String name) {
        String n = repeatedName;
        return n != null && n.equals(name);
    }

    /** The position marked by {@link #markRepeated}, or -1; identical on every rank, like the entries. */
    int repeated() {
        return repeated;
    }

    private boolean fitsRepeated(Response r) {
        return r != null && EagerPayload.fits(r, repeatedMaxBytes);
    }

    private void forgetRepeated(int position) {
        if (repeated == position) {
            setRepeated(-1);
        }
    }

    private static boolean cacheable(Response r) {
        // An allgather's answer holds every rank's rows; each rank checks its own part (Response.answers), so a change
        // on any rank sends the name back to the coordinator everywhere. An alltoall's holds no splits.
        return switch (r.kind()) {
            case ALLREDUCE, BROADCAST, REDUCESCATTER, ALLGATHER, ALLTOALL -> r.joined().length == 0;
            case BARRIER, JOIN -> false;
        };
    }

    private int freeOrOldest() {
        int oldest = 0;
        for (int i = 0; i < entries.length; i++) {
            if (entries[i] == null) {
                return i;
            }
            if (lastUsed[i] < lastUsed[oldest]) {
                oldest = i;
            }
        }
        return oldest;
    }
}
