package io.kolo.engine;

/**
 * The work a {@link CycleRunner} paces, as an Agrona {@code Agent}: one negotiation cycle at a time, on whichever
 * thread the runner lets run it, never two at once.
 */
interface CycleAgent {
    /**
     * Runs one cycle (the runner's lock is held); true when the engine is finished: an agreed shutdown, or a failure.
     *
     * @param nowNanos the runner's {@link System#nanoTime()} of a moment ago, the cycle's start (clock reads are a
     *                 measurable share of a small op's work in {@code kolo bench allreduce -np 2 --sizes 8B..4KiB};
     *                 docs/performance.md, "Measured constants")
     */
    boolean cycle(long nowNanos);

    /** Whether this rank has ops that are not done yet, so its next cycle may be the one that runs them. */
    boolean hasWork();

    /** Whether nothing was submitted since the last cycle took up the queue. */
    boolean queueEmpty();

    /** When a cycle last took up a submitted op. */
    long lastDrainNanos();

    /** When the current (or last) cycle began. */
    long cycleStartNanos();

    /** Ops completed since start (a change means the caller of one may submit its next op any moment). */
    long completedOps();

    /** The runner's thread ends (the runner's lock is held): fail what is left and free what the agent holds. */
    void close();
}
