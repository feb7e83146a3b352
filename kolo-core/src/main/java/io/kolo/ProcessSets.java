package io.kolo;

import io.kolo.collective.AlgorithmSettings;
import io.kolo.collective.CollectiveOps;
import io.kolo.collective.Hierarchy;
import io.kolo.engine.Engine;
import io.kolo.engine.Op;
import io.kolo.engine.OpKind;
import io.kolo.ProcessSetRefusal.Call;
import io.kolo.ProcessSetRefusal.Reason;
import io.kolo.transport.Transport;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BooleanSupplier;

/**
 * One rank's process sets: registering and removing them in step with every other rank, and the collectives of each
 * set this rank belongs to.
 *
 * <p>Every registration is an allgather on the global set of what each rank asked for. Its result reaches every rank
 * in the same engine cycle, and the listener, running on that cycle's thread, checks the answers and tells the engine
 * to start (or stop) the set's cycles from the next one: the only way to make every member switch at the same point,
 * which sets that share a transport need. Checking after the exchange, not before, is what lets a bad or mismatched
 * request fail on every rank with the same message instead of on some ranks while the others wait.
 */
final class ProcessSets {
    private static final int OK = 0;
    private static final int EMPTY = 1;
    private static final int DUPLICATE = 2;
    private static final int OUT_OF_RANGE = 3;
    /** A request's first word: which call made it, so that ranks calling different ones meet and fail together. */
    private static final long ADD = 0;
    private static final long REMOVE = 1;

    private final Engine engine;
    private final Transport transport;
    private final List<Topology> everyRank;
    private final AlgorithmSettings algorithms;
    private final long smallMessageBytes;
    private final boolean dynamic;
    private final int rank;
    private final int size;
    private final Object owner;
    private final BooleanSupplier closed;
    private final ProcessSet global;
    private final SetCollectives globalOps;
    private final Map<Integer, ProcessSet> registered = new ConcurrentHashMap<>();
    private final Map<Integer, SetCollectives> collectives = new ConcurrentHashMap<>();
    /** What {@code Communicator.on(set)} returns for each set this rank belongs to, made once. */
    private final Map<Integer, Collectives> views = new ConcurrentHashMap<>();
    private long sequence;
    /** The next set's id: changed only on the cycle's thread, the same on every rank. */
    private int nextId = 1;

    ProcessSets(Engine engine, Transport transport, List<Topology> everyRank, AlgorithmSettings algorithms,
                long smallMessageBytes, boolean dynamic, Object owner, BooleanSupplier closed) {
        this.engine = engine;
        this.transport = transport;
        this.everyRank = List.copyOf(everyRank);
        this.algorithms = algorithms;
        this.smallMessageBytes = smallMessageBytes;
        this.dynamic = dynamic;
        this.rank = engine.rank();
        this.size = engine.size();
        this.owner = owner;
        this.closed = closed;
        this.global = ProcessSet.global(size, rank, owner);
        this.globalOps = new SetCollectives(engine, 0, rank, size, rank, closed);
        registered.put(0, global);
        collectives.put(0, globalOps);
    }

    ProcessSet global() {
        return global;
    }

    SetCollectives globalOps() {
        return globalOps;
    }

    /** Registered sets, global first, by id. */
    List<ProcessSet> all() {
        List<ProcessSet> l = new ArrayList<>(registered.values());
        l.sort((a, b) -> Integer.compare(a.id(), b.id()));
        return l;
    }

    /** The collectives of {@code set} on this rank, which must be a member. */
    SetCollectives of(ProcessSet set) {
        if (set == global) {
            return globalOps;
        }
        checkOwned(set, "run a collective on it");
        SetCollectives c = collectives.get(set.id());
        if (c == null) {
            throw new IllegalArgumentException("rank " + rank + " is not in process set " + set.id() + " (ranks "
                    + set.ranks() + "): only its members may call its collectives");
        }
        return c;
    }

    /** What {@code Communicator.on(set)} returns for a set other than the global one. */
    Collectives on(ProcessSet set) {
        of(set);
        Collectives c = views.get(set.id());
        if (c == null) {
            of(set); // removed since: says so
        }
        return c;
    }

    private void checkOwned(ProcessSet set, String what) {
        if (set.owner() == null && set.hasEnded()) {
            String ranks = set.ranks().toString();
            throw new IllegalArgumentException("process set " + ranks + " belongs to a job that has ended"
                    + " (Kolo.shutdown(), or an elastic reset): register it with this one, by Kolo.init(sets) or, with"
                    + " KOLO_DYNAMIC_PROCESS_SETS=1, addProcessSet(" + ranks.substring(1, ranks.length() - 1)
                    + ") on every rank (in an elastic job: at the start of Elastic.run's body, which every worker runs again after a"
                    + " reset)");
        }
        if (set.owner() != owner) {
            throw new IllegalArgumentException(set + " is not registered with rank " + rank + "'s communicator: pass it"
                    + " to Kolo.init or Communicator.addProcessSet on every rank before you " + what);
        }
        if (set.isRemoved()) {
            throw new IllegalArgumentException("process set " + set.id() + " (ranks " + set.ranks() + ") was removed");
        }
    }

    /** The job ended: every set this rank registered is unregistered, free for the next job's registration. */
    void release() {
        for (ProcessSet s : registered.values()) {
            s.unbind();
        }
    }

    /** A static set, registered as the job starts (see {@link #add}), whether or not dynamic sets are allowed. */
    ProcessSet addStatic(ProcessSet set) {
        return register(set, null, Call.INIT);
    }

    /**
     * Registers {@code set} in step with every rank (a collective of the global set); returns it, now registered. A
     * call this rank refuses still takes part in the exchange, so that every rank fails with it instead of waiting.
     */
    ProcessSet add(ProcessSet set) {
        return register(set, dynamic ? null : Reason.NOT_DYNAMIC, Call.ADD);
    }

    /** @param call what the user called, for messages: static sets come from Kolo.init, not addProcessSet */
    private synchronized ProcessSet register(ProcessSet set, Reason refused, Call call) {
        Reason why = refused != null ? refused : set.owner() != null ? Reason.ALREADY_REGISTERED : null;
        long[] mine = why != null ? ProcessSetRefusal.encode(call, why, set.id(), requestLength()) : encode(set.requested());
        return exchange(mine, answers -> decide(set, answers, call.label));
    }

    /** Removes {@code set} in step with every rank (a collective of the global set); refused as {@link #add} is. */
    synchronized void remove(ProcessSet set) {
        Reason why = !dynamic ? Reason.NOT_DYNAMIC : set == global || set.id() == 0 ? Reason.GLOBAL : unusable(set);
        long[] mine;
        if (why != null) {
            mine = ProcessSetRefusal.encode(Call.REMOVE, why, set.id(), requestLength());
        } else {
            mine = new long[requestLength()];
            mine[0] = REMOVE;
            mine[1] = set.id();
        }
        exchange(mine, answers -> unregister(set, answers));
    }

    /** Why this rank cannot remove {@code set}, as {@link #checkOwned} says it; null when it can. */
    private Reason unusable(ProcessSet set) {
        return set.owner() == null && set.hasEnded() ? Reason.ENDED : set.owner() != owner ? Reason.NOT_REGISTERED
                : set.isRemoved() ? Reason.REMOVED : null;
    }

    @FunctionalInterface
    private interface Decision<T> {
        /** On the cycle's thread, with every rank's request in rank order; a KoloException fails it on every rank. */
        T decide(long[][] answers);
    }

    /**
     * Adding and removing share one name and one request length per call, so that ranks calling different ones in the
     * same turn submit the same op and fail on every rank, naming each rank's call, instead of each waiting for an op
     * the others never submit until KOLO_TIMEOUT_SECONDS.
     */
    private <T> T exchange(long[] mine, Decision<T> decision) {
        String name = "kolo.process_set." + (++sequence);
        Tensor in = Tensor.of(mine, mine.length);
        Tensor[] out = new Tensor[1];
        Handle<T> handle = new Handle<>(name, engine.settings().timeout());
        Op op = Op.of(OpKind.ALLGATHER, name, DataType.INT64, new long[]{mine.length}, in.segment())
                .outputs(shape -> (out[0] = Tensor.allocateLike(in, DataType.INT64, shape)).segment())
                .listener(new Op.Listener() {
                    @Override
                    public void completed(Op o) {
                        try {
                            long[] flat = out[0].longs();
                            long[][] answers = new long[size][];
                            for (int r = 0; r < size; r++) {
                                answers[r] = Arrays.copyOfRange(flat, r * mine.length, (r + 1) * mine.length);
                            }
                            RuntimeException refused = ProcessSetRefusal.of(answers, rank);
                            if (refused != null) {
                                handle.fail(refused);
                                return;
                            }
                            sameCalls(answers);
                            handle.complete(decision.decide(answers));
                        } catch (RuntimeException e) {
                            handle.fail(e instanceof KoloException ? e : new KoloException(e.toString(), e));
                        }
                    }

                    @Override
                    public void failed(Op o, RuntimeException error) {
                        handle.fail(error);
                    }
                });
        if (closed.getAsBoolean()) {
            throw new IllegalStateException("this communicator (rank " + rank + ") is closed");
        }
        handle.drivenBy(engine::drive);
        handle.explainedBy(n -> engine.waitingFor(0, n));
        engine.submit(op);
        return handle.await();
    }

    /** {call, problem or set id, detail, bitmap of ranks...}: every rank's request lines up in the allgather. */
    private int requestLength() {
        return 3 + (size + 63) / 64;
    }

    /** An add request: {ADD, problem, detail, bitmap of ranks...}. */
    private long[] encode(int[] sorted) {
        long[] e = new long[requestLength()];
        e[0] = ADD;
        if (sorted.length == 0) {
            e[1] = EMPTY;
            return e;
        }
        for (int i = 0; i < sorted.length; i++) {
            int r = sorted[i];
            if (r < 0 || r >= size) {
                e[1] = OUT_OF_RANGE;
                e[2] = r;
                return e;
            }
            if (i > 0 && sorted[i - 1] == r) {
                e[1] = DUPLICATE;
                e[2] = r;
                return e;
            }
            e[3 + r / 64] |= 1L << (r % 64);
        }
        return e;
    }

    /** Fails on every rank when some ranks added a set and others removed one in the same turn. */
    private void sameCalls(long[][] answers) {
        for (int r = 1; r < size; r++) {
            if (answers[r][0] != answers[0][0]) {
                StringBuilder sb = new StringBuilder("the ranks made different process-set calls (");
                for (int q = 0; q < size; q++) {
                    sb.append(q == 0 ? "" : ", ").append("rank ").append(q).append(answers[q][0] == ADD
                            ? " addProcessSet " + describe(answers[q]) : " removeProcessSet of set " + answers[q][1]);
                }
                throw new KoloException(sb.append("); call addProcessSet and removeProcessSet in the same order on every"
                        + " rank, members or not").toString());
            }
        }
    }

    private ProcessSet decide(ProcessSet set, long[][] answers, String call) {
        long[] first = answers[0];
        for (int r = 1; r < size; r++) {
            if (!Arrays.equals(first, answers[r])) {
                StringBuilder sb = new StringBuilder(call + ": the ranks asked for different process sets (");
                for (int q = 0; q < size; q++) {
                    sb.append(q == 0 ? "" : ", ").append("rank ").append(q).append(' ').append(describe(answers[q]));
                }
                throw new KoloException(sb.append("); call it with the same ranks on every rank, members or not")
                        .toString());
            }
        }
        if (first[1] != OK) {
            throw new KoloException(call + ": " + describe(first) + "; a process set lists each of its ranks"
                    + " once, from 0 to " + (size - 1));
        }
        int[] members = members(first);
        for (ProcessSet existing : registered.values()) {
            if (Arrays.equals(existing.requested(), members)) {
                throw new KoloException(call + ": ranks " + Arrays.toString(members) + " already form process"
                        + " set " + existing.id() + "; use that one");
            }
        }
        int id = nextId++;
        set.bind(id, rank, owner);
        int mine = set.rank();
        if (mine >= 0) {
            CollectiveOps ops = Hierarchy.forSubset(transport, members, everyRank, algorithms, smallMessageBytes);
            engine.addProcessSet(id, members, ops);
            collectives.put(id, new SetCollectives(engine, id, mine, members.length, rank, closed));
            views.put(id, new ProcessSetCollectives(this, set));
        }
        registered.put(id, set);
        return set;
    }

    private Void unregister(ProcessSet set, long[][] answers) {
        for (int r = 1; r < size; r++) {
            if (answers[r][1] != answers[0][1]) {
                StringBuilder sb = new StringBuilder("removeProcessSet: the ranks asked to remove different sets (");
                for (int q = 0; q < size; q++) {
                    sb.append(q == 0 ? "" : ", ").append("rank ").append(q).append(" set ").append(answers[q][1]);
                }
                throw new KoloException(sb.append("); remove the same set on every rank, members or not").toString());
            }
        }
        int id = set.id();
        engine.removeProcessSet(id, "process set " + id + " (ranks " + set.ranks() + ") was removed (removeProcessSet)");
        registered.remove(id);
        collectives.remove(id);
        views.remove(id);
        set.markRemoved();
        return null;
    }

    private String describe(long[] request) {
        return switch ((int) request[1]) {
            case EMPTY -> "an empty set (a process set needs at least one rank)";
            case DUPLICATE -> "rank " + request[2] + " twice";
            case OUT_OF_RANGE -> "rank " + request[2] + ", which is not a rank of this job of " + size;
            default -> Arrays.toString(members(request));
        };
    }

    private int[] members(long[] request) {
        int[] m = new int[size];
        int n = 0;
        for (int r = 0; r < size; r++) {
            if ((request[3 + r / 64] & (1L << (r % 64))) != 0) {
                m[n++] = r;
            }
        }
        return Arrays.copyOf(m, n);
    }
}
