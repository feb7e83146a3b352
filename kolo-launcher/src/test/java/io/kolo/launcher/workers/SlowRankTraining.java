package io.kolo.launcher.workers;

import io.kolo.Kolo;
import io.kolo.KoloException;
import io.kolo.ReduceOp;

/**
 * A training loop whose rank 2 computes slower than the others, for the job view's tests.
 * {@code SlowRankTraining STEPS [named]}: each step "computes" (sleeps 10 ms, rank 2 60 ms), averages a gradient and
 * reports its loss and the job's progress; prints "rank R step S" every 10 steps. With {@code named} the gradient's
 * allreduce has a name, the same every step, as a framework's gradients do: from the second step on it runs from the
 * response cache and never reaches the coordinator. When another rank fails, a rank says so and
 * takes 3 s more before it fails too.
 */
public final class SlowRankTraining {
    private SlowRankTraining() {
    }

    public static void main(String[] args) throws InterruptedException {
        int steps = Integer.parseInt(args[0]);
        boolean named = args.length > 1 && args[1].equals("named");
        Kolo.init();
        int rank = Kolo.rank();
        float[] gradient = new float[4096];
        try {
            for (int step = 0; step < steps; step++) {
                Thread.sleep(rank == 2 ? 60 : 10);
                java.util.Arrays.fill(gradient, 1f / (step + 1));
                if (named) {
                    Kolo.allreduce("grad", gradient, ReduceOp.AVERAGE);
                } else {
                    Kolo.allreduce(gradient, ReduceOp.AVERAGE);
                }
                Kolo.report("loss", 2.0 / (step + 1) + 0.1 * rank, step);
                Kolo.report("progress", (step + 1) / (double) steps);
                if (step % 10 == 0) {
                    System.out.println("rank " + rank + " step " + step);
                }
            }
        } catch (KoloException e) {
            // As a program that saves its state before it goes: the job (and the launcher's view of it) lasts a few
            // seconds more, in which a watching page sees the failed rank.
            System.out.println("rank " + rank + " stops: " + e.getMessage());
            Thread.sleep(3000);
            throw e;
        }
        Kolo.shutdown();
    }
}
