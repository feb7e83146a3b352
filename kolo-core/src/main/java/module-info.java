/**
 * Kolo's collectives for the JVM: {@code io.kolo} is the public API ({@link io.kolo.Kolo}, {@link
 * io.kolo.Communicator}, {@link io.kolo.Tensor}, ...), with {@code io.kolo.elastic} for elastic jobs and
 * {@code io.kolo.launch} for code that starts ranks in its own process manager (Spark, a scheduler). The engine, the
 * algorithms and the transports are internal; the launcher reaches the bootstrap and the transports' cleanup, the
 * benchmarks the reduction kernels, and nothing else does.
 *
 * <pre>{@code
 * Kolo.init();                                   // joins the job its environment describes
 * float[] grads = ...;
 * Kolo.allreduce(grads, ReduceOp.AVERAGE);       // every rank now holds the average
 * }</pre>
 */
// The launcher and the benchmarks, the targets of its qualified exports, are built after it.
@SuppressWarnings("module")
module io.kolo.core {
    requires java.logging;
    requires jdk.httpserver;
    requires static jdk.incubator.vector;

    exports io.kolo;
    exports io.kolo.elastic;
    exports io.kolo.launch;
    exports io.kolo.bootstrap to io.kolo.launcher, io.kolo.bench;
    exports io.kolo.transport to io.kolo.launcher;
    exports io.kolo.collective to io.kolo.bench;
    exports io.kolo.view to io.kolo.launcher;
}
