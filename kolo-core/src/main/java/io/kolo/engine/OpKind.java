package io.kolo.engine;

/** The collective an op asks for. */
public enum OpKind {
    ALLREDUCE, ALLGATHER, BROADCAST, ALLTOALL, REDUCESCATTER, BARRIER, JOIN;

    /** Lower-case name used in messages and generated op names. */
    public String label() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }
}
