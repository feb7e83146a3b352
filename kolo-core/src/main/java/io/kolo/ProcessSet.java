package io.kolo;

import java.util.Arrays;
import java.util.List;

/**
 * Some of a job's ranks, running collectives of their own, as Horovod's {@code hvd.ProcessSet}: model or pipeline
 * parallelism, evaluation on part of the job while the rest trains, hierarchical schemes of your own. Each set
 * negotiates on its own (its own names, fusion, response cache, timeline and stall inspector), so one set waiting does
 * not hold up another. The global set, id 0, is every rank.
 *
 * <p>Static sets are passed to {@link Kolo#init(ProcessSet...)} (or {@link Communicator#fromEnvironment(java.util.Map,
 * ProcessSet...)}); with {@code KOLO_DYNAMIC_PROCESS_SETS=1} they can also be added and removed while the job runs
 * ({@link Communicator#addProcessSet}). Either way every rank, member or not, registers the same sets in the same
 * order; a rank that asked for different ranks makes the registration fail on every rank, naming what each asked for.
 *
 * <pre>{@code
 * ProcessSet trainers = ProcessSet.of(0, 1, 2);
 * ProcessSet evaluator = ProcessSet.of(3);
 * Kolo.init(trainers, evaluator);
 * if (trainers.included()) {
 *     Kolo.on(trainers).allreduce(gradients, ReduceOp.AVERAGE);   // only ranks 0-2 take part
 * }
 * }</pre>
 *
 * <p>{@link Kolo#on(ProcessSet)} and {@link Communicator#on(ProcessSet)} give a set's {@link Collectives}; a rank that
 * is not in the set may not call them. Ranks inside a set are numbered 0..{@code size()-1} in ascending job-rank order
 * ({@link #rank()}); results of allgather and alltoall come in that order. A broadcast's root is given as a job rank
 * (as in Horovod and PyTorch), and must be a member.
 *
 * <p>One object belongs to one rank's communicator once registered (its {@link #rank()} is that rank's); several
 * ranks in one JVM each create their own. When that communicator closes ({@link Kolo#shutdown()}) the set is
 * unregistered again, and a new job may register it (pass it to the next {@link Kolo#init(ProcessSet...)}).
 */
public final class ProcessSet {
    private final int[] ranks;
    private volatile int id = -1;
    private volatile int myRank = -1;
    private volatile boolean removed;
    private volatile Object owner;
    /** Registered with a job that has since ended, and not with another yet: said so when it is used. */
    private volatile boolean ended;

    private ProcessSet(int[] ranks) {
        this.ranks = ranks;
    }

    /**
     * The set of these job ranks (in any order). Not checked until it is registered, so that a bad list fails on every
     * rank at once rather than on some ranks while the others wait.
     */
    public static ProcessSet of(int... ranks) {
        int[] sorted = ranks.clone();
        Arrays.sort(sorted);
        return new ProcessSet(sorted);
    }

    /** The registered set every rank belongs to. */
    static ProcessSet global(int size, int myRank, Object owner) {
        int[] all = new int[size];
        for (int r = 0; r < size; r++) {
            all[r] = r;
        }
        ProcessSet s = new ProcessSet(all);
        s.bind(0, myRank, owner);
        return s;
    }

    void bind(int id, int myRank, Object owner) {
        this.ended = false;
        this.myRank = myRank;
        this.owner = owner;
        this.id = id;
    }

    void markRemoved() {
        removed = true;
    }

    /**
     * The job it was registered with ended (its communicator closed: {@code Kolo.shutdown()}, an elastic reset): it is
     * no one's again, so that the next job's {@code Kolo.init(sets)} can register it, as a new job's sets are.
     */
    void unbind() {
        id = -1;
        myRank = -1;
        removed = false;
        owner = null;
        ended = true;
    }

    /** Whether its job ended since it was registered (see {@link #unbind()}). */
    boolean hasEnded() {
        return ended;
    }

    /** Ranks as given to {@link #of}, sorted (duplicates kept, for the registration's error). */
    int[] requested() {
        return ranks.clone();
    }

    Object owner() {
        return owner;
    }

    boolean isRemoved() {
        return removed;
    }

    /** The set's id, the same on every rank: 0 for the global set, then 1, 2, ... in registration order; -1 until registered. */
    public int id() {
        return id;
    }

    /** Whether the set was registered (and not removed since). */
    public boolean isRegistered() {
        return id >= 0 && !removed;
    }

    /** The set's job ranks, ascending. */
    public List<Integer> ranks() {
        return Arrays.stream(ranks).boxed().toList();
    }

/** How many ranks the set has. */
    public int size() {
        return ranks.length;
    }

    /** Whether this rank belongs to the set. */
    public boolean included() {
        return rankOf(myRank) >= 0;
    }

    /** This rank's rank within the set (0..size()-1), or -1 when it is not a member or the set is not registered. */
    public int rank() {
        return rankOf(myRank);
    }

    /** The set rank of job rank {@code jobRank}, or -1 when it is not a member. */
    int rankOf(int jobRank) {
        if (jobRank < 0) {
            return -1;
        }
        int i = Arrays.binarySearch(ranks, jobRank);
        return i >= 0 ? i : -1;
    }

    @Override
    public String toString() {
        return "ProcessSet(id=" + id + ", ranks=" + Arrays.toString(ranks) + (removed ? ", removed" : "") + ")";
    }
}
