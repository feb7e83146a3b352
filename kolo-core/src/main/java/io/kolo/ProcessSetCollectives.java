package io.kolo;

/**
 * The collectives of a registered {@link ProcessSet} other than the global one, as {@link Communicator#on(ProcessSet)}
 * returns them: each call finds the set's {@link SetCollectives} again, so that a set removed since fails saying so,
 * and translates a broadcast's root from a job rank to a set rank.
 */
final class ProcessSetCollectives extends Collectives {
    private final ProcessSets sets;
    private final ProcessSet set;

    ProcessSetCollectives(ProcessSets sets, ProcessSet set) {
        this.sets = sets;
        this.set = set;
    }

    @Override
    SetCollectives ops() {
        return sets.of(set);
    }

    @Override
    int setRank(int root) {
        int r = set.rankOf(root);
        if (r < 0) {
            throw new IllegalArgumentException("broadcast root " + root + " is not in process set " + set.id()
                    + " (ranks " + set.ranks() + "); the root is a job rank that belongs to the set");
        }
        return r;
    }

    @Override
    int jobRank(int setRank) {
        return set.ranks().get(setRank);
    }

    @Override
    public String toString() {
        return "Collectives[" + set + "]";
    }
}
