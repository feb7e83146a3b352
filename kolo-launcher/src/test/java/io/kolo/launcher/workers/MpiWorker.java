package io.kolo.launcher.workers;

import io.kolo.Kolo;
import io.kolo.ReduceOp;

import java.util.Arrays;

/**
 * A Kolo program started by someone else's launcher (mpirun, srun): it knows nothing of Kolo variables and
 * takes its rank from {@link Kolo} alone. {@code MpiWorker MODE}:
 * <ul>
 *   <li>{@code collectives}: allreduce, allgather and broadcast; prints one line per rank,
 *       {@code "rank R of N local L of M: sum=S gathered=[...] broadcast=B"};</li>
 *   <li>{@code exit-rank-1}: as {@code collectives}, but rank 1 exits with code 3 after joining;</li>
 *   <li>{@code placement}: one allreduce, then one line per rank, {@code "rank R of N local L of M cross C of D"};</li>
 *   <li>{@code throw-rank-2-finally}: every rank allreduces in {@code try { ... } finally { Kolo.shutdown(); }}, and
 *       rank 2 throws IllegalStateException("injected failure at iteration 20") at step 20, uncaught: it leaves the
 *       job before its exception reaches the JVM, and no launcher of Kolo's records its exit.</li>
 *   <li>{@code seconds-6}: allreduces for 6 seconds of rank 0's clock, every rank reporting its "loss" each step,
 *       then prints "rank R done".</li>
 * </ul>
 * A failing init or collective prints {@code "rank ? failed: CLASS: MESSAGE"} and exits 1.
 */
public final class MpiWorker {
    private MpiWorker() {
    }

    public static void main(String[] args) {
        String mode = args.length > 0 ? args[0] : "collectives";
        if (mode.equals("throw-rank-2-finally")) {
            Kolo.init();
            throwOnRank2(Kolo.rank());
            return;
        }
        try {
            Kolo.init();
            int rank = Kolo.rank();
            if (mode.startsWith("seconds-")) {
                forSeconds(rank, Integer.parseInt(mode.substring("seconds-".length())));
                return;
            }
            if (mode.equals("exit-rank-1") && rank == 1) {
                System.exit(3);
            }
            float[] sum = {rank + 1};
            Kolo.allreduce(sum, ReduceOp.SUM);
            if (mode.equals("placement")) {
                System.out.println("rank " + rank + " of " + Kolo.size() + " local " + Kolo.localRank() + " of "
                        + Kolo.localSize() + " cross " + Kolo.crossRank() + " of " + Kolo.crossSize());
                Kolo.shutdown();
                return;
            }
            float[] gathered = Kolo.allgather(new float[] {rank * 10});
            float[] fromRoot = {rank == 0 ? 4242 : -1};
            Kolo.broadcast(fromRoot, 0);
            System.out.println("rank " + rank + " of " + Kolo.size() + " local " + Kolo.localRank() + " of "
                    + Kolo.localSize() + ": sum=" + (int) sum[0] + " gathered=" + Arrays.toString(gathered)
                    + " broadcast=" + (int) fromRoot[0]);
            Kolo.shutdown();
        } catch (RuntimeException e) {
            System.out.println("rank ? failed: " + e.getClass().getSimpleName() + ": " + e.getMessage());
            System.exit(1);
        }
    }

    private static void forSeconds(int rank, int seconds) {
        float[] x = new float[1000];
        long end = System.nanoTime() + seconds * 1_000_000_000L;
        for (int step = 0; ; step++) {
            // Rank 0's clock decides when every rank stops, so that all run the same steps.
            x[0] = rank == 0 && System.nanoTime() - end > 0 ? 1 : 0;
            Kolo.allreduce(x, ReduceOp.SUM);
            Kolo.report("loss", 1.0 / (step + 1), step);
            if (x[0] > 0) {
                break;
            }
            try {
                Thread.sleep(5);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        System.out.println("rank " + rank + " done");
        Kolo.shutdown();
    }

    private static void throwOnRank2(int rank) {
        try {
            float[] x = new float[1000];
            for (int step = 0; step < 1000; step++) {
                if (rank == 2 && step == 20) {
                    throw new IllegalStateException("injected failure at iteration 20");
                }
                Kolo.allreduce(x, ReduceOp.SUM);
            }
        } catch (RuntimeException e) {
            if (rank == 2) {
                throw e;
            }
            System.out.println("rank " + rank + " failed: " + e.getClass().getSimpleName() + ": " + e.getMessage());
            System.exit(1);
        } finally {
            Kolo.shutdown();
        }
    }
}
