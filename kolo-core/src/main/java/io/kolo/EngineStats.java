package io.kolo;

/**
 * Counters of one rank's engine, for diagnostics and tests: how often the coordinator was needed, how many
 * ops ran straight from the response cache, and how many fused buffers carried more than one op.
 *
 * @param coordinatorRounds cycles that needed the gather-to-rank-0 round
 * @param cachedOps         ops executed from the response cache, without a coordinator round
 * @param fusedBuffers      collectives that carried two or more ops in one buffer
 * @param completedOps      ops completed successfully
 * @param eagerOps          cached ops whose data travelled with the negotiation ({@code KOLO_EAGER_ALLREDUCE_BYTES}),
 *                          counted in {@code cachedOps} too
 */
public record EngineStats(long coordinatorRounds, long cachedOps, long fusedBuffers, long completedOps,
                          long eagerOps) {
}
