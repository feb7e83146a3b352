package io.kolo.bench;

import io.kolo.Tensor;

/**
 * What one size's ops run on: its name, the input, alltoall's splits and allgather's output, which the caller keeps
 * as {@code MPI_Allgather}'s caller does (null for the other collectives).
 */
record Operands(String name, Tensor tensor, long[] splits, Tensor output) {
}
