package io.kolo.bench;

import io.kolo.Communicator;
import io.kolo.ReduceOp;
import io.kolo.Tensor;

import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * What one rank of {@code kolo bench scale} does, as a thread or as a process: join the job, one small allreduce,
 * wait at {@code started} while its resources are read, then time small and 1 MiB allreduces.
 *
 * <p>Each timing follows a warm-up of about {@link #WARM_UP_NANOS} (the JIT compiles the data path while it runs):
 * two warm-up ops, as this once did, timed the interpreter, tens of times the steady state at 2 ranks. Every rank must
 * run the same number of ops or the job hangs, so the ranks agree when to stop: each warm-up round ends with a small
 * allreduce of the ranks' elapsed time and last op's time, and every rank reads the same sums. The sums also fix how
 * many ops the timing runs (about {@link #TIMED_NANOS} of them), so a job of a thousand ranks where one op takes
 * seconds still ends after a few.
 *
 * <p>The ops are named, as a training loop names its gradients: a repeated named op takes the engine's cached path
 * (one exchange per cycle for a small one), where an unnamed op is a new name each time and is negotiated through
 * rank 0 every time.
 */
final class ScaleRank {
    static final int SMALL_FLOATS = 2;
    static final int LARGE_FLOATS = 1 << 18;   // 1 MiB
    static final long WARM_UP_NANOS = TimeUnit.SECONDS.toNanos(2);
    static final long TIMED_NANOS = TimeUnit.SECONDS.toNanos(1);
    static final int MIN_SMALL_ITERS = 5;
    static final int MIN_LARGE_ITERS = 3;
    /** Bounds the timing of an op much faster than the clock's reading, and the warm-up's rounds likewise. */
    static final int MAX_ITERS = 200_000;

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
            Tensor smallTensor = Tensor.of(small);
            comm.allreduce("scale.small", smallTensor, ReduceOp.SUM);
            long t2 = System.nanoTime();
            started.await();
            // The small op is its own vote: it is the same 8-byte sum as the timed one.
            int smallIters = warmUp(comm, small, () -> { }, MIN_SMALL_ITERS);
            long s0 = System.nanoTime();
            for (int i = 0; i < smallIters; i++) {
                comm.allreduce("scale.small", smallTensor, ReduceOp.SUM);
            }
            long s1 = System.nanoTime();
            Tensor large = Tensor.of(new float[LARGE_FLOATS]);
            int largeIters = warmUp(comm, small, () -> comm.allreduce("scale.large", large, ReduceOp.SUM),
                    MIN_LARGE_ITERS);
            long l0 = System.nanoTime();
            for (int i = 0; i < largeIters; i++) {
                comm.allreduce("scale.large", large, ReduceOp.SUM);
            }
            long l1 = System.nanoTime();
            return new Times((t1 - t0) / 1e6, (t2 - t1) / 1e6, (s1 - s0) / 1e3 / smallIters,
                    (l1 - l0) / 1e3 / largeIters);
        }
    }

    /**
     * Runs {@code op} and a vote ({@code vote}, a small allreduce) in rounds until the ranks' mean elapsed time
     * reaches {@link #WARM_UP_NANOS} (at least one round); returns how many ops to time, at least {@code minIters}:
     * the same on every rank, as both follow from the vote's sums.
     */
    static int warmUp(Communicator comm, float[] vote, Runnable op, int minIters) {
        int n = comm.size();
        Tensor voteTensor = Tensor.of(vote);
        long start = System.nanoTime();
        long last = start;
        for (int round = 1; ; round++) {
            op.run();
            long now = System.nanoTime();
            vote[0] = (float) ((now - start) / 1e6);   // ms
            vote[1] = (float) ((now - last) / 1e3);    // us: this round, the vote before it and the op
            last = now;
            comm.allreduce("scale.small", voteTensor, ReduceOp.SUM);
            double meanElapsedMs = vote[0] / n;
            if (meanElapsedMs * 1e6 >= WARM_UP_NANOS || round >= MAX_ITERS) {
                double roundUs = Math.max(vote[1] / n, 1e-3);
                return timedIterations(roundUs, minIters);
            }
        }
    }

    /** How many ops of about {@code opUs} fill {@link #TIMED_NANOS}, within [minIters, MAX_ITERS]. */
    static int timedIterations(double opUs, int minIters) {
        double fit = TIMED_NANOS / 1e3 / opUs;
        return (int) Math.max(minIters, Math.min(MAX_ITERS, fit));
    }
}
