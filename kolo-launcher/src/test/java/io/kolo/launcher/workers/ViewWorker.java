package io.kolo.launcher.workers;

import io.kolo.Kolo;
import io.kolo.ReduceOp;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;

/**
 * A Kolo program for the job view's tests. {@code ViewWorker SECONDS PIDDIR}: writes its PID to PIDDIR/rank.R, then
 * allreduces for SECONDS seconds of rank 0's (checking each sum), printing "rank R step S" every 50 steps, and exits 0.
 */
public final class ViewWorker {
    private ViewWorker() {
    }

    public static void main(String[] args) throws Exception {
        long seconds = Long.parseLong(args[0]);
        Path pids = Path.of(args[1]);
        int rank = Integer.parseInt(System.getenv("KOLO_RANK"));
        Files.writeString(pids.resolve("rank." + rank), Long.toString(ProcessHandle.current().pid()));
        Kolo.init();
        try {
            float[] x = new float[10_000];
            long end = System.nanoTime() + seconds * 1_000_000_000L;
            for (int step = 0; ; step++) {
                Arrays.fill(x, rank + step);
                // Rank 0's clock decides when every rank stops, so that all run the same steps.
                x[x.length - 1] = rank == 0 && System.nanoTime() - end > 0 ? 1 : 0;
                Kolo.allreduce(x, ReduceOp.SUM);
                float expected = Kolo.size() * (float) step + Kolo.size() * (Kolo.size() - 1) / 2f;
                if (x[0] != expected) {
                    throw new IllegalStateException("wrong sum " + x[0] + " != " + expected);
                }
                if (x[x.length - 1] > 0) {
                    break;
                }
                if (step % 50 == 0) {
                    System.out.println("rank " + rank + " step " + step);
                }
                Thread.sleep(5);
            }
        } finally {
            Kolo.shutdown();
        }
    }
}
