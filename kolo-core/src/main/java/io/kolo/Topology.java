package io.kolo;

/**
 * Where a rank sits in the job, as Horovod defines it: {@code local} counts ranks on the same host,
 * {@code cross} counts hosts that run a rank with the same local rank.
 */
public record Topology(int rank, int size, int localRank, int localSize, int crossRank, int crossSize) {
}
