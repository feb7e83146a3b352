package io.kolo.bench;

import io.kolo.Communicator;
import io.kolo.ReduceOp;

import java.util.Map;

/**
 * What one rank of {@code kolo bench scale} does, as a thread or as a process: join the job, one small allreduce,
 * wait at {@code started} while its resources are read, then time small and 1 MiB allreduces.
 */
final class ScaleRank {
    static final int SMALL_FLOATS = 2;
    static final int LARGE_FLOATS = 1 << 18;   // 1 MiB
    static final int SMALL_ITERS = 20;
    static final int LARGE_ITERS = 3;

    /** Per-rank times: join, first op, and the steady state's time per op. */
    record Times(double initMs, double firstOpMs, double smallUs, double largeUs) {
    }

    /** Called once this rank has joined and finished its first op; returns when the resources have been read. */
    interface Started {
        void await() throws Exception;
    }

    private ScaleRank() {
    }

    static Times run(Map<String, String> env, Started started) throws Exception {
        long t0 = System.nanoTime();
        try (Communicator comm = Communicator.fromEnvironment(env)) {
            long t1 = System.nanoTime();
            float[] small = new float[SMALL_FLOATS];
            comm.allreduce(small, ReduceOp.SUM);
            long t2 = System.nanoTime();
            started.await();
            for (int i = 0; i < 2; i++) {
                comm.allreduce(small, ReduceOp.SUM);
            }
            long s0 = System.nanoTime();
            for (int i = 0; i < SMALL_ITERS; i++) {
                comm.allreduce(small, ReduceOp.SUM);
            }
            long s1 = System.nanoTime();
            float[] large = new float[LARGE_FLOATS];
            comm.allreduce(large, ReduceOp.SUM);
            long l0 = System.nanoTime();
            for (int i = 0; i < LARGE_ITERS; i++) {
                comm.allreduce(large, ReduceOp.SUM);
            }
            long l1 = System.nanoTime();
            return new Times((t1 - t0) / 1e6, (t2 - t1) / 1e6, (s1 - s0) / 1e3 / SMALL_ITERS,
                    (l1 - l0) / 1e3 / LARGE_ITERS);
        }
    }
}
