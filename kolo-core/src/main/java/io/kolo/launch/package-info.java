/**
 * For code that starts Kolo ranks in its own process manager instead of {@code kolo run}: a Spark barrier stage
 * ({@code kolo-spark}), a scheduler's workers, threads of one JVM. A launcher does four things, and this package holds
 * what each takes:
 *
 * <ol>
 *   <li>checks the user's {@code KOLO_*} settings once, up front ({@link io.kolo.launch.WorkerEnvironment#settingsFrom});</li>
 *   <li>makes a secret for the job ({@link io.kolo.launch.JobSecret}) and serves the job's rendezvous store
 *       ({@link io.kolo.launch.RendezvousService}) where every rank can reach it;</li>
 *   <li>gives each rank its variables ({@link io.kolo.launch.WorkerEnvironment#forRank}), which the rank joins the job
 *       with: {@link io.kolo.Communicator#fromEnvironment(java.util.Map)};</li>
 *   <li>removes shared memory that killed ranks left behind on a host ({@link io.kolo.launch.SharedMemory}).</li>
 * </ol>
 *
 * <pre>{@code
 * JobSecret secret = JobSecret.generate();
 * List<String> hosts = List.of("127.0.0.1", "127.0.0.1");                  // the host of every rank
 * try (RendezvousService store = RendezvousService.start(InetAddress.getLoopbackAddress(), 0, secret)) {
 *     for (int r = 0; r < hosts.size(); r++) {
 *         Map<String, String> env = WorkerEnvironment.forRank(r, hosts)
 *                 .rendezvous(store.address()).secret(secret).build();
 *         Thread.ofPlatform().start(() -> {
 *             try (Communicator comm = Communicator.fromEnvironment(env)) {
 *                 double[] x = {comm.rank()};
 *                 comm.allreduce(x, ReduceOp.SUM);                          // {1} on both ranks
 *             }
 *         });
 *     }
 *     ... join the threads (with a timeout), then close the store
 * }
 * }</pre>
 *
 * <p>Everything else in the job (the engine, the algorithms, the transports) is the same as under {@code kolo run}:
 * a rank does not know who started it.
 */
package io.kolo.launch;
