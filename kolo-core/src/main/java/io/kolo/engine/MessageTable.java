package io.kolo.engine;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The coordinator's (rank 0's) view of submissions that went the slow way: which rank asked for which name.
 * Decides when a name is ready everywhere, checks that the ranks agree on what they asked for, and turns
 * disagreement into an error response that reaches every rank. Also tracks join and stalls.
 */
final class MessageTable {
    /** The stall inspector's longest period, and the age from which an op's missing ranks are told to every rank. */
    private static final long INSPECT_NANOS = 1_000_000_000L;

    private final int size;
    /** Submissions in first-arrival order, which is the order ready ops are executed in. */
    private final Map<String, Entry> entries = new LinkedHashMap<>();
    private final boolean[] joined;
    private final List<Integer> joinOrder = new ArrayList<>();
    private long lastStallCheck = System.nanoTime();
    /** Which ranks each long-waiting op still waits for, as of the last inspection; null once sent. */
    private Map<String, String> waitingFor;
    private boolean toldWaiting;
    /** Who the ranks waited for, and what waits now: for the job view. */
    private final CoordinatorFigures figures;
    /** The coordinator round now, and when it began: see {@link #newRound}. */
    private long round;
    private long roundNanos = System.nanoTime();

    private static final class Entry {
        final Request[] byRank;
        final long firstSeen = System.nanoTime();
        /** The round of the first request: a rank whose request came in a later round kept the others waiting. */
        final long firstRound;
        int count;
        boolean warned;

        Entry(int size, long firstRound) {
            byRank = new Request[size];
            this.firstRound = firstRound;
        }
    }

    /** The set's ranks in the job, by set rank: messages name ranks as the user knows them. */
    private final int[] members;
    /** After an op's name in messages: which process set it belongs to ("" for the global set). */
    private final String where;
    /** The process set's id (0: every rank). */
    private final int set;
    private final Agreement agreement;
    private final StallWarnings warnings;
    private final UnnamedOrder unnamedOrder;

    MessageTable(int size) {
        this(identity(size), 0);
    }

    MessageTable(int[] members, int set) {
        this.size = members.length;
        this.joined = new boolean[size];
        this.members = members.clone();
        this.where = set == 0 ? "" : " in process set " + set;
        this.set = set;
        this.agreement = new Agreement(this.members, where);
        this.warnings = new StallWarnings(where);
        this.unnamedOrder = new UnnamedOrder(this.members, where);
        this.figures = new CoordinatorFigures(size);
    }

    /** Who the ranks waited for (by set rank), and what waits now. */
    CoordinatorFigures figures() {
        return figures;
    }

    /** A coordinator round begins: the requests added until the next call arrived together. */
    void newRound() {
        round++;
        roundNanos = System.nanoTime();
    }

    private static int[] identity(int size) {
        int[] r = new int[size];
        for (int i = 0; i < size; i++) {
            r[i] = i;
        }
        return r;
    }

    boolean isEmpty() {
        return entries.isEmpty() && joinOrder.isEmpty();
    }

    /** Adds one rank's new submissions. A rank naming the same op twice gets an error response. */
    void add(List<Request> requests, List<Response> errors) {
        for (Request r : requests) {
            if (r.kind() == OpKind.JOIN) {
                if (!joined[r.rank()]) {
                    joined[r.rank()] = true;
                    joinOrder.add(r.rank());
                }
                continue;
            }
            Entry e = entries.get(r.name());
            if (e == null) {
                e = new Entry(size, round);
                entries.put(r.name(), e);
            }
            if (e.byRank[r.rank()] != null) {
                entries.remove(r.name());
                errors.add(Response.error(r.kind(), List.of(r.name()), "rank " + members[r.rank()] + " submitted '" + r.name()
                        + "'" + where + " twice while it was in flight; give concurrent ops distinct names"));
                continue;
            }
            e.byRank[r.rank()] = r;
            e.count++;
            if (e.count == size && e.firstRound != round) {
                // The last request of the op, a round or more after the first: the others waited for this rank.
                figures.last(r.rank(), roundNanos - e.firstSeen);
            }
        }
    }

    /**
     * Removes and returns, as single-name responses in arrival order, every op now submitted by every rank
     * that has not joined. Members of a group come out together once the whole group is ready.
     */
    List<Response> takeReady() {
        List<Response> ready = new ArrayList<>();
        int joinedCount = joinOrder.size();
        Map<String, Integer> readyPerGroup = new LinkedHashMap<>();
        Map<String, String> failedGroups = null;
        for (Entry e : entries.values()) {
            if (isReady(e, joinedCount)) {
                Request any = any(e);
                if (any.group() != null) {
                    readyPerGroup.merge(any.group(), 1, Integer::sum);
                }
            }
        }
        Iterator<Entry> it = entries.values().iterator();
        while (it.hasNext()) {
            Entry e = it.next();
            if (!isReady(e, joinedCount)) {
                continue;
            }
            Request any = any(e);
            // Ranks that disagree on the group's size would wait for each other's missing members: fail it now.
            if (any.group() != null && readyPerGroup.getOrDefault(any.group(), 0) < any.groupSize()
                    && groupSizesAgree(e, any)) {
                continue;
            }
            it.remove();
            Response r = respond(e);
            ready.add(r);
            if (r.isError() && any.group() != null) {
                if (failedGroups == null) {
                    failedGroups = new LinkedHashMap<>();
                }
                failedGroups.put(any.group(), r.error());
            }
        }
        if (failedGroups != null) {
            failGroups(failedGroups, ready);
        }
        failOutOfOrder(ready);
        if (entries.isEmpty()) {
            // Nothing waits any more (the stall inspector may not look again while the cache answers every op).
            figures.waiting(List.of());
        }
        if (joinedCount == size) {
            ready.add(Response.join(joinOrder.getLast()));
            Arrays.fill(joined, false);
            joinOrder.clear();
        }
        return ready;
    }

    /**
     * A group is one unit: once one of its members failed (the ranks disagree on it, or on the group's size), the
     * members some ranks have already submitted fail too, with the same message. Left waiting, they would never be
     * ready, since a rank whose group has fewer members never submits the rest.
     */
    private void failGroups(Map<String, String> failed, List<Response> out) {
        Iterator<Entry> it = entries.values().iterator();
        while (it.hasNext()) {
            Request any = any(it.next());
            String why = any.group() == null ? null : failed.get(any.group());
            if (why != null) {
                it.remove();
                out.add(Response.error(any.kind(), List.of(any.name()), why));
            }
        }
    }

    /**
     * What is left waits for ranks that have not submitted it. When that proves the ranks submitted their unnamed ops
     * in different orders, nothing will ever answer those ops: they fail now, on every rank.
     */
    private void failOutOfOrder(List<Response> out) {
        if (entries.isEmpty()) {
            return;
        }
        Response error = unnamedOrder.check(entries.values().stream().map(e -> e.byRank).toList(), joined);
        if (error != null) {
            entries.keySet().removeAll(error.names());
            out.add(error);
        }
    }

    private static boolean groupSizesAgree(Entry e, Request any) {
        for (Request r : e.byRank) {
            if (r != null && r.groupSize() != any.groupSize()) {
                return false;
            }
        }
        return true;
    }

    private boolean isReady(Entry e, int joinedCount) {
        if (e.count + joinedCount < size) {
            return false;
        }
        for (int r = 0; r < size; r++) {
            if (e.byRank[r] == null && !joined[r]) {
                return false;
            }
        }
        return e.count > 0;
    }

    private static Request any(Entry e) {
        for (Request r : e.byRank) {
            if (r != null) {
                return r;
            }
        }
        throw new IllegalStateException("empty entry");
    }

    private int[] joinedRanks() {
        return joinOrder.stream().mapToInt(Integer::intValue).sorted().toArray();
    }

    /** Checks agreement and builds the response every rank will execute. */
    private Response respond(Entry e) {
        Request first = any(e);
        String name = first.name();
        List<String> names = List.of(name);
        String mismatch = agreement.mismatch(e.byRank, first);
        if (mismatch != null) {
            return Response.error(first.kind(), names, mismatch);
        }
        int[] joinedNow = joinedRanks();
        if (joinedNow.length > 0 && (first.kind() == OpKind.ALLTOALL || first.kind() == OpKind.REDUCESCATTER)) {
            return Response.error(first.kind(), names, first.kind().label() + " '" + name
                    + "'" + where + " is not supported while ranks " + Arrays.toString(global(joinedNow)) + " have joined");
        }
        switch (first.kind()) {
            case BROADCAST -> {
                if (first.root() < 0 || first.root() >= size) {
                    return Response.error(first.kind(), names, "broadcast '" + name + "' names root rank "
                            + first.root() + ", but ranks are 0.." + (size - 1));
                }
                if (joined[first.root()]) {
                    return Response.error(first.kind(), names, "broadcast '" + name + "' has root rank "
                            + members[first.root()] + ", which has already joined");
                }
            }
            case REDUCESCATTER -> {
                if (first.shape().length == 0) {
                    return Response.error(first.kind(), names, "reducescatter '" + name + "' needs a tensor with at least one dimension");
                }
            }
            default -> { }
        }
        long[][] perRank = null;
        if (first.kind() == OpKind.ALLGATHER) {
            perRank = new long[size][];
            for (int r = 0; r < size; r++) {
                perRank[r] = new long[]{e.byRank[r] == null ? 0 : Shapes.firstDim(e.byRank[r].shape())};
            }
        }
        return new Response(first.kind(), names, first.type(), first.op(), first.prescale(), first.postscale(),
                first.root(), new long[][]{first.shape()}, perRank, joinedNow, null, -1);
    }

    /**
     * The stall inspector: warns about ops that some ranks submitted long ago and others never did. Past
     * {@code shutdownAfter} (if non-zero) it returns why the set must end: the coordinator sends that to every rank of
     * the set, which all end with it, the ranks that never submitted the op as well as those waiting for it. Null
     * while nothing has stalled that long.
     */
    String inspectStalls(long checkNanos, long shutdownNanos) {
        long now = System.nanoTime();
        // Often enough that the warning and the shutdown come within a second of the configured time.
        long period = Math.min(INSPECT_NANOS, Math.min(checkNanos, shutdownNanos > 0 ? shutdownNanos : Long.MAX_VALUE) / 4);
        if (now - lastStallCheck < period) {
            return null;
        }
        lastStallCheck = now;
        Map<String, String> waiting = new LinkedHashMap<>();
        List<CoordinatorFigures.Waiting> waits = new ArrayList<>();
        List<String> stalled = new ArrayList<>();
        for (Entry e : entries.values()) {
            List<Integer> missing = missing(e);
            if (missing.isEmpty()) {
                // The last rank's request came in this round: the op is ready, not stalled (takeReady runs it next).
                continue;
            }
            long age = now - e.firstSeen;
            Request first = any(e);
            if (age >= INSPECT_NANOS) {
                waits.add(new CoordinatorFigures.Waiting(first.name(),
                        missing.stream().mapToInt(Integer::intValue).toArray(), age));
                List<Integer> submitted = submitted(e);
                waiting.put(first.name(), "rank" + (missing.size() == 1 ? " " : "s ") + join(missing)
                        + " had not submitted it after " + age / 1_000_000_000L + " s (rank"
                        + (submitted.size() == 1 ? " " : "s ") + join(submitted) + " had)");
            }
            if (shutdownNanos > 0 && age >= shutdownNanos) {
                stalled.add(first.kind().label() + " '" + first.name() + "'" + where + " was submitted by ranks "
                        + submitted(e) + " but not by ranks " + missing + " for " + age / 1_000_000_000L + " s");
            } else if (age >= checkNanos && !e.warned) {
                e.warned = true;
                warnings.add(first.kind().label(), first.name(), submitted(e), missing, age / 1_000_000_000L);
            }
        }
        warnings.log();
        figures.waiting(waits);
        if (!waiting.isEmpty() || toldWaiting) {
            waitingFor = waiting;
            toldWaiting = !waiting.isEmpty();
        }
        if (stalled.isEmpty()) {
            return null;
        }
        entries.clear();
        String them = stalled.size() == 1 ? "it" : "them";
        // Named as the warnings name them: a model's hundreds of gradients would make one unreadable message.
        String ops = String.join("; ", stalled.subList(0, Math.min(stalled.size(), StallWarnings.NAMED)))
                + (stalled.size() > StallWarnings.NAMED ? "; and " + (stalled.size() - StallWarnings.NAMED) + " more ops" : "");
        return "stalled: " + ops + " (KOLO_STALL_SHUTDOWN_TIME_SECONDS); the missing ranks never"
                + " called " + them + ", or called " + them + " under another name; "
                + (set == 0 ? "Kolo stopped on every rank" : "process set " + set + " ended on each of its ranks");
    }

    /**
     * What each op that has waited a while still waits for, when that changed since the last call, else null: the
     * coordinator sends it to every rank, so that a rank whose wait times out can say which ranks never submitted.
     */
    Map<String, String> takeWaitingFor() {
        Map<String, String> w = waitingFor;
        waitingFor = null;
        return w;
    }

    private int[] global(int[] setRanks) {
        int[] g = new int[setRanks.length];
        for (int i = 0; i < g.length; i++) {
            g[i] = members[setRanks[i]];
        }
        return g;
    }

    private static String join(List<Integer> ranks) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < ranks.size(); i++) {
            sb.append(i == 0 ? "" : i == ranks.size() - 1 ? " and " : ", ").append(ranks.get(i));
        }
        return sb.toString();
    }

    private List<Integer> submitted(Entry e) {
        List<Integer> l = new ArrayList<>();
        for (int r = 0; r < size; r++) {
            if (e.byRank[r] != null) {
                l.add(members[r]);
            }
        }
        return l;
    }

    private List<Integer> missing(Entry e) {
        List<Integer> l = new ArrayList<>();
        for (int r = 0; r < size; r++) {
            if (e.byRank[r] == null && !joined[r]) {
                l.add(members[r]);
            }
        }
        return l;
    }
}
