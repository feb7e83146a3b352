package io.kolo;

/**
 * What {@code alltoall} returns: the rows received, concatenated in rank order, and how many rows came from
 * each rank.
 *
 * @param tensor         received rows
 * @param receivedSplits {@code receivedSplits[r]} rows came from rank {@code r}
 */
public record AlltoallResult(Tensor tensor, long[] receivedSplits) {
}
