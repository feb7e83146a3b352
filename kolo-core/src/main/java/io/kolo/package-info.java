/**
 * Kolo's public API: data-parallel collectives for a job of ranks, as Horovod's {@code hvd}.
 *
 * <ul>
 *   <li>{@link io.kolo.Kolo}: the static facade most programs use, one communicator per process
 *       ({@code Kolo.init()}, {@code Kolo.allreduce(...)}, {@code Kolo.shutdown()}).</li>
 *   <li>{@link io.kolo.Communicator}: one rank's membership in a job (its {@link io.kolo.Topology}, process sets,
 *       leaving); several ranks in one JVM with {@link io.kolo.Communicator#local(int)}.</li>
 *   <li>{@link io.kolo.Collectives}: allreduce, allgather, broadcast, alltoall, reducescatter, barrier, join, on
 *       arrays and {@link io.kolo.Tensor}s, blocking or asynchronous ({@link io.kolo.Handle}); the communicator's for
 *       every rank, {@code comm.on(set)}'s for a {@link io.kolo.ProcessSet}.</li>
 *   <li>{@link io.kolo.Tensor}, {@link io.kolo.DataType}, {@link io.kolo.ReduceOp}, {@link io.kolo.Compression}:
 *       what the collectives take.</li>
 *   <li>{@link io.kolo.KoloException} and its kinds: what fails, named on every rank.</li>
 * </ul>
 *
 * <pre>{@code
 * Kolo.init();                                              // joins the job its environment describes
 * float[] grads = computeGradients();
 * Kolo.allreduce(grads, ReduceOp.AVERAGE);                  // every rank now holds the average
 * Kolo.on(trainers).allreduce(grads, ReduceOp.AVERAGE);     // among a process set's ranks only
 * Kolo.shutdown();
 * }</pre>
 */
package io.kolo;
