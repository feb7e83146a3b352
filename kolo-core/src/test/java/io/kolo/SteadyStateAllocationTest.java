package io.kolo;

import io.kolo.launch.JobSecret;
import org.junit.jupiter.api.Test;

import java.lang.management.ManagementFactory;
import java.net.ServerSocket;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The steady-state path (a named op the response cache already knows, on a preallocated array) allocates
 * nothing on the engine thread and only the op's own bookkeeping (op, handle) on the caller's thread.
 * Measured with the JVM's per-thread allocation counters, not with time, over TCP (the engine thread also
 * runs the transport; the in-JVM transport's condition waits allocate a node per wait, so it is not used here).
 */
class SteadyStateAllocationTest {
    private static final int WARMUP = 3000;
    private static final int OPS = 2000;
    /** The op, its handle and latch, the listener and the queue and in-flight entries; a few hundred bytes. */
    private static final long CALLER_BYTES_PER_OP = 1024;

    private static com.sun.management.ThreadMXBean threads() {
        var bean = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        assumeTrue(bean.isThreadAllocatedMemorySupported(), "this JVM cannot count allocated bytes per thread");
        bean.setThreadAllocatedMemoryEnabled(true);
        return bean;
    }

    /** Bytes allocated so far by this rank's engine thread(s) (a finished job's engine thread counts for 0). */
    private static long engineBytes(com.sun.management.ThreadMXBean bean, int rank) {
        long total = 0;
        int found = 0;
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.getName().equals("kolo-engine-" + rank) && t.isAlive()) {
                total += Math.max(0, bean.getThreadAllocatedBytes(t.threadId()));
                found++;
            }
        }
        assertTrue(found > 0, "no engine thread for rank " + rank);
        return total;
    }

    /** {engine bytes per op, caller bytes per op} after a warm-up, for a float and a double allreduce per step. */
    private static long[] measure(Communicator comm) {
        var bean = threads();
        float[] grad = new float[1024];
        double[] avg = new double[64];
        Tensor g = Tensor.of(grad);
        Tensor a = Tensor.of(avg);
        for (int i = 0; i < WARMUP; i++) {
            step(comm, g, a, grad, avg);
        }
        long engine0 = engineBytes(bean, comm.rank());
        long caller0 = bean.getCurrentThreadAllocatedBytes();
        for (int i = 0; i < OPS; i++) {
            step(comm, g, a, grad, avg);
        }
        long caller = bean.getCurrentThreadAllocatedBytes() - caller0;
        long engine = engineBytes(bean, comm.rank()) - engine0;
        // Checked after measuring so that the check itself is not counted; proves the ops really ran.
        step(comm, g, a, grad, avg);
        assertEquals(comm.size() * (comm.size() - 1) / 2.0f, grad[7], "allreduce result");
        return new long[]{engine / (2L * OPS), caller / (2L * OPS)};
    }

    private static void step(Communicator comm, Tensor g, Tensor a, float[] grad, double[] avg) {
        java.util.Arrays.fill(grad, comm.rank());
        java.util.Arrays.fill(avg, comm.rank());
        comm.allreduceAsync("grad", g, ReduceOp.SUM).await();
        comm.allreduceAsync("avg", a, ReduceOp.AVERAGE, 2.0, 0.5).await();
    }

    /**
     * {engine bytes per op, caller bytes per op} for a small allreduce called blocking under its name, which runs on
     * the caller's thread with the vote: no op, no handle, nothing at all once warm (a rare first try that another rank
     * was not ready for goes the ordinary way, and is the only allocation left).
     */
    private static long[] measureNamed(Communicator comm) {
        var bean = threads();
        double[] loss = new double[4];
        Tensor t = Tensor.of(loss);
        for (int i = 0; i < WARMUP; i++) {
            comm.allreduce("loss", t, ReduceOp.AVERAGE);
        }
        long engine0 = engineBytes(bean, comm.rank());
        long caller0 = bean.getCurrentThreadAllocatedBytes();
        for (int i = 0; i < OPS; i++) {
            comm.allreduce("loss", t, ReduceOp.AVERAGE);
        }
        long caller = bean.getCurrentThreadAllocatedBytes() - caller0;
        long engine = engineBytes(bean, comm.rank()) - engine0;
        java.util.Arrays.fill(loss, comm.rank());
        comm.allreduce("loss", t, ReduceOp.AVERAGE);
        assertEquals((comm.size() - 1) / 2.0, loss[3], "allreduce result");
        return new long[]{engine / OPS, caller / OPS};
    }

    /**
     * {engine bytes per op, caller bytes per op} for a broadcast of {@code stopInts} ints, then an allgather of
     * {@code rowLongs} longs per rank into the caller's output, each called blocking under its name. Small ones ride
     * with the vote on the caller's thread as allreduce does; larger ones go the ordinary way, an op negotiated from the
     * response cache.
     */
    private static long[] measureGathers(Communicator comm, int stopInts, int rowLongs) {
        var bean = threads();
        int[] stop = new int[stopInts];
        Tensor s = Tensor.of(stop);
        long[] mine = new long[rowLongs];
        long[] all = new long[rowLongs * comm.size()];
        Tensor m = Tensor.of(mine, 1, rowLongs);
        Tensor a = Tensor.of(all, comm.size(), rowLongs);
        long engine = 0;
        long caller = 0;
        for (int kind = 0; kind < 2; kind++) {
            for (int i = 0; i < WARMUP; i++) {
                namedGather(comm, kind, s, m, a);
            }
            long engine0 = engineBytes(bean, comm.rank());
            long caller0 = bean.getCurrentThreadAllocatedBytes();
            for (int i = 0; i < OPS; i++) {
                namedGather(comm, kind, s, m, a);
            }
            caller += bean.getCurrentThreadAllocatedBytes() - caller0;
            engine += engineBytes(bean, comm.rank()) - engine0;
        }
        stop[stopInts - 1] = comm.rank() + 5;
        mine[rowLongs - 1] = comm.rank() + 7;
        namedGather(comm, 0, s, m, a);
        namedGather(comm, 1, s, m, a);
        assertEquals(5, stop[stopInts - 1], "broadcast result");
        assertEquals(7 + comm.size() - 1, all[rowLongs * comm.size() - 1], "allgather result");
        return new long[]{engine / (2L * OPS), caller / (2L * OPS)};
    }

    private static void namedGather(Communicator comm, int kind, Tensor stop, Tensor mine, Tensor all) {
        if (kind == 0) {
            comm.broadcast("stop", stop, 0);
        } else {
            comm.allgatherInto("metrics", mine, all);
        }
    }

    private static void check(List<long[]> perRank) {
        check(perRank, CALLER_BYTES_PER_OP);
    }

    private static void check(List<long[]> perRank, long callerBytesPerOp) {
        for (int r = 0; r < perRank.size(); r++) {
            long[] m = perRank.get(r);
            System.out.println("rank " + r + ": engine thread " + m[0] + " B/op, caller " + m[1] + " B/op");
            assertTrue(m[0] < 8, "rank " + r + "'s engine thread allocated " + m[0] + " bytes per op");
            assertTrue(m[1] < callerBytesPerOp, "rank " + r + "'s caller allocated " + m[1] + " bytes per op");
        }
    }

    @Test
    void tcpRanksAllocateNothingPerOpOnTheEngineThread() throws Exception {
        check(overTcp(SteadyStateAllocationTest::measure));
    }

    @Test
    void aSmallNamedBlockingAllreduceAllocatesNothingOnEitherThread() throws Exception {
        // An op and its handle alone are well over 64 bytes: below it, almost every call went without them.
        check(overTcp(SteadyStateAllocationTest::measureNamed), 64);
    }

    @Test
    void aSmallNamedBlockingBroadcastOrAllgatherAllocatesNothingOnEitherThread() throws Exception {
        check(overTcp(comm -> measureGathers(comm, 3, 2)), 64);
    }

    @Test
    void aBroadcastOrAllgatherTooLargeToRideAllocatesNothingOnTheEngineThread() throws Exception {
        // 1 KiB per rank: too large to ride with the vote.
        check(overTcp(comm -> measureGathers(comm, 256, 128)));
    }

    /**
     * A repeated alltoall whose splits change every call runs from the cache, and the exchange of its counts inside the
     * op allocates nothing: what one op allocates, on whichever thread runs its cycle (the engine's, or the waiting
     * caller's), is the op's own bookkeeping and the result it hands the caller (its tensor, shape and received splits).
     */
    @Test
    void aRepeatedAlltoallWhoseSplitsChangeAllocatesOnlyItsOpAndResult() throws Exception {
        for (long[] m : overTcp(SteadyStateAllocationTest::measureAlltoall)) {
            System.out.println("alltoall: engine thread " + m[0] + " B/op, caller " + m[1] + " B/op");
            assertTrue(m[0] + m[1] < CALLER_BYTES_PER_OP, "an alltoall allocated " + m[0] + " bytes per op on the"
                    + " engine thread and " + m[1] + " on the caller's");
        }
    }

    /**
     * With the job view on, a thread per rank reads the engine's figures every 10 ms (a hundred times its default
     * pace) and publishes them: the engine's steady state still allocates nothing, the caller no more than without it,
     * and a reported point nothing at all.
     */
    @Test
    void withTheJobViewOnTheStepsStillAllocateNothingAndAReportNothingAtAll() throws Exception {
        Map<String, String> view = Map.of("KOLO_VIEW", "1", "KOLO_VIEW_INTERVAL_MS", "10");
        check(overTcp(SteadyStateAllocationTest::measure, view));
        check(overTcp(SteadyStateAllocationTest::measureNamed, view), 64);
        for (long[] perReport : overTcp(SteadyStateAllocationTest::measureReport, view)) {
            assertEquals(0, perReport[1], "bytes a reported point allocated on the caller's thread");
        }
    }

    /**
     * {engine bytes per op, caller bytes per op} for an alltoall repeated under its name whose splits change every call
     * (4 rows of one float; rank 0 sends {@code [a, 4 - a]}, rank 1 {@code [4 - a, a]}, so each receives 4 rows).
     */
    private static long[] measureAlltoall(Communicator comm) {
        var bean = threads();
        float[] rows = new float[4];
        Tensor t = Tensor.of(rows, 4);
        long[][] splits = new long[5][];
        for (int a = 0; a < 5; a++) {
            splits[a] = comm.rank() == 0 ? new long[]{a, 4 - a} : new long[]{4 - a, a};
        }
        for (int i = 0; i < WARMUP; i++) {
            comm.alltoallAsync("route", t, splits[i % 5]).await();
        }
        long engine0 = engineBytes(bean, comm.rank());
        long caller0 = bean.getCurrentThreadAllocatedBytes();
        for (int i = 0; i < OPS; i++) {
            comm.alltoallAsync("route", t, splits[i % 5]).await();
        }
        long caller = bean.getCurrentThreadAllocatedBytes() - caller0;
        long engine = engineBytes(bean, comm.rank()) - engine0;
        java.util.Arrays.fill(rows, comm.rank() + 1);
        AlltoallResult last = comm.alltoallAsync("route", t, splits[1]).await();
        assertEquals(comm.rank() == 0 ? 1 : 3, last.receivedSplits()[0], "alltoall's received splits");
        assertEquals(2.0f, last.tensor().floats()[3], "alltoall result");
        assertTrue(comm.stats().cachedOps() > OPS, "the alltoall ran from the cache: " + comm.stats());
        return new long[]{engine / OPS, caller / OPS};
    }

    /** {0, caller bytes per report} for points reported while the ranks' reporters publish them. */
    private static long[] measureReport(Communicator comm) {
        var bean = threads();
        for (int i = 0; i < WARMUP; i++) {
            comm.report("loss", i * 0.5, i);
        }
        long caller0 = bean.getCurrentThreadAllocatedBytes();
        for (int i = 0; i < 100 * OPS; i++) {
            comm.report("loss", i * 0.5, i);
            comm.report("accuracy", i);
        }
        long caller = bean.getCurrentThreadAllocatedBytes() - caller0;
        return new long[]{0, caller / (200L * OPS)};
    }

    private static List<long[]> overTcp(java.util.function.Function<Communicator, long[]> measure) throws Exception {
        return overTcp(measure, Map.of());
    }

    private static List<long[]> overTcp(java.util.function.Function<Communicator, long[]> measure,
                                        Map<String, String> settings) throws Exception {
        threads(); // skips here, on the test's thread, when the JVM cannot count
        int port;
        try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            port = s.getLocalPort();
        }
        String secret = JobSecret.generate().toHex();
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            List<Future<long[]>> futures = new ArrayList<>();
            for (int r = 0; r < 2; r++) {
                Map<String, String> env = new java.util.HashMap<>(Map.of("KOLO_RANK", Integer.toString(r), "KOLO_SIZE",
                        "2", "KOLO_RENDEZVOUS_ADDR", "127.0.0.1", "KOLO_RENDEZVOUS_PORT", Integer.toString(port),
                        "KOLO_SECRET", secret, "KOLO_START_TIMEOUT_SECONDS", "20"));
                env.putAll(settings);
                futures.add(pool.submit(() -> {
                    try (Communicator c = Communicator.fromEnvironment(env)) {
                        return measure.apply(c);
                    }
                }));
            }
            List<long[]> perRank = new ArrayList<>();
            for (Future<long[]> f : futures) {
                perRank.add(f.get(120, TimeUnit.SECONDS));
            }
            return perRank;
        } finally {
            pool.shutdownNow();
        }
    }
}
