package io.kolo.engine;

/**
 * What a submitted op gets on the caller's thread before it is queued: a generated name when it has none, a check that
 * the engine's thread can read its memory, and its name's in-flight slot. Its {@link Request} is made only if it goes
 * to the coordinator (a new name, or a changed one): an op the response cache answers is compared field by field.
 */
final class Submissions {
    private final int rank;
    private final InFlightNames inFlight;
    /** Unnamed ops so far, by kind; guarded by this. */
    private final long[] unnamedOfKind = new long[OpKind.values().length];
    /** Unnamed ops so far, every kind but join; guarded by this. */
    private long unnamed;
    /** The unnamed group whose members are being submitted, and its place; guarded by this. */
    private String lastGroup;
    private long lastGroupPlace;

    Submissions(int rank, InFlightNames inFlight) {
        this.rank = rank;
        this.inFlight = inFlight;
    }

    /**
     * Unnamed ops get {@code allreduce.noname.7}: it matches across ranks only if every rank submits in the same order.
     * They also get their place in this rank's order of unnamed ops, by which the coordinator tells ranks that
     * submitted different kinds in one place ({@link UnnamedOrder}). A join is left out: a rank that joined skips the
     * ops the others run meanwhile, and its place would only say so.
     */
    void name(Op op) {
        if (op.name == null) {
            synchronized (this) {
                op.name = op.kind.label() + ".noname." + ++unnamedOfKind[op.kind.ordinal()];
                op.unnamed = op.kind == OpKind.JOIN ? 0 : ++unnamed;
                lastGroup = null;
            }
            op.generatedName = true;
        } else if (op.generatedName && op.group != null) {
            // An unnamed group's members, submitted one after another, share the group's one place.
            synchronized (this) {
                if (!op.group.equals(lastGroup)) {
                    lastGroup = op.group;
                    lastGroupPlace = ++unnamed;
                }
                op.unnamed = lastGroupPlace;
            }
        }
    }

    /**
     * @throws IllegalArgumentException when {@code engineThread} cannot read the tensor, or an op of the same name is
     *                                  still in flight on this rank
     */
    void claim(Op op, Thread engineThread) {
        if (!op.input.isAccessibleBy(engineThread)) {
            throw new IllegalArgumentException("'" + op.name + "': the tensor's memory is confined to one thread and"
                    + " Kolo's engine thread cannot read it; allocate it from Arena.ofShared(), Arena.ofAuto() or Arena.global()");
        }
        op.slot = inFlight.claim(op.name);
        if (op.slot == null) {
            throw new IllegalArgumentException("a collective named '" + op.name + "' is already in flight on rank "
                    + rank + "; wait for it to finish or give the new one another name");
        }
    }
}
