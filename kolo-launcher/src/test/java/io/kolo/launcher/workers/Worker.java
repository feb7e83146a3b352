package io.kolo.launcher.workers;

import io.kolo.Kolo;
import io.kolo.KoloException;
import io.kolo.ReduceOp;
import io.kolo.bootstrap.KoloSettings;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;

/**
 * A real Kolo program for the launcher's process tests. {@code Worker MODE PIDDIR}:
 * <ul>
 *   <li>{@code steady}: 20 allreduce steps, checks every result, prints "rank R ok";</li>
 *   <li>{@code steady-after-gate}: rank 0 writes the rendezvous port to PIDDIR.port, every rank waits for a file
 *       PIDDIR.gate, then as {@code steady};</li>
 *   <li>{@code exit-mid-allreduce}: rank 1 calls System.exit(3) at step 5 while the others keep reducing;
 *       they print "rank R failed fast: MESSAGE" and exit 1;</li>
 *   <li>{@code kill-mid-allreduce}: rank 1 SIGKILLs itself at step 5 (no shutdown hook, no cleanup runs);</li>
 *   <li>{@code never-init-rank-2}: rank 2 never calls Kolo.init(), so the others time out at the start;</li>
 *   <li>{@code forever}: prints "rank R reducing" after the first step and keeps reducing until stopped;</li>
 *   <li>{@code uncaught-throw}: rank 2 throws IllegalStateException("injected failure at iteration 20") at step 20,
 *       and nobody catches anything (as in a user's program);</li>
 *   <li>{@code uncaught-throw-finally}: as {@code uncaught-throw}, in {@code try { ... } finally { Kolo.shutdown(); }}
 *       (as the bundled examples are written), so rank 2 leaves the job before its exception is uncaught;</li>
 *   <li>{@code uncaught-never-call}: rank 2 joins but never calls a collective; the others' allreduce times out
 *       (set KOLO_TIMEOUT_SECONDS), uncaught.</li>
 *   <li>{@code adasum}: each rank's gradient is the unit vector of its rank; prints "rank R adasum [...]" after an
 *       allreduce with ReduceOp.ADASUM (orthogonal gradients: the sum, a vector of ones).</li>
 *   <li>{@code rejoin}: as {@code steady}, then Kolo.shutdown(), Kolo.init() and 20 steps more, printing
 *       "rank R ok" after each job (Horovod's hvd.shutdown() then hvd.init());</li>
 *   <li>{@code settings}: as {@code steady}, then prints "rank R settings ..." with the engine settings the rank
 *       reads, where it runs (host, local rank, working directory) and "rank R ok".</li>
 * </ul>
 * Each rank writes its PID to PIDDIR so the test can check nothing is left running.
 */
public final class Worker {
    private Worker() {
    }

    public static void main(String[] args) throws Exception {
        String mode = args[0];
        Path pids = Path.of(args[1]);
        int rank = Integer.parseInt(System.getenv("KOLO_RANK"));
        Files.writeString(pids.resolve("rank." + rank), Long.toString(ProcessHandle.current().pid()));
        if (mode.equals("never-init-rank-2") && rank == 2) {
            Thread.sleep(60_000);
            return;
        }
        if (mode.equals("steady-after-gate")) {
            // Lets a test see the job's rendezvous port and do something to it before any rank connects.
            Path gate = pids.resolveSibling(pids.getFileName() + ".gate");
            if (rank == 0) {
                Files.writeString(pids.resolveSibling(pids.getFileName() + ".port"), System.getenv("KOLO_RENDEZVOUS_PORT"));
            }
            for (int i = 0; i < 1200 && !Files.exists(gate); i++) {
                Thread.sleep(50);
            }
            mode = "steady";
        }
        if (mode.startsWith("uncaught-")) {
            uncaught(mode, rank);
            return;
        }
        if (mode.equals("adasum")) {
            Kolo.init();
            float[] g = new float[Kolo.size()];
            g[rank] = 1f;
            Kolo.allreduce(g, ReduceOp.ADASUM);
            System.out.println("rank " + rank + " adasum " + Arrays.toString(g));
            Kolo.shutdown();
            return;
        }
        boolean settings = mode.equals("settings");
        boolean rejoin = mode.equals("rejoin");
        if (settings || rejoin) {
            mode = "steady";
        }
        long start = System.nanoTime();
        try {
            if (rejoin) {
                steps(rank, 20);
                System.out.println("rank " + rank + " ok");
                Kolo.shutdown();
            }
            Kolo.init();
            float[] x = new float[100_000];
            for (int step = 0; step < 1000; step++) {
                if (mode.equals("exit-mid-allreduce") && rank == 1 && step == 5) {
                    System.exit(3);
                }
                if (mode.equals("kill-mid-allreduce") && rank == 1 && step == 5) {
                    new ProcessBuilder("kill", "-9", Long.toString(ProcessHandle.current().pid())).start().waitFor();
                    Thread.sleep(60_000);
                }
                Arrays.fill(x, rank + step);
                Kolo.allreduce(x, ReduceOp.SUM);
                float expected = Kolo.size() * (float) step + Kolo.size() * (Kolo.size() - 1) / 2f;
                if (x[x.length - 1] != expected) {
                    throw new IllegalStateException("wrong sum " + x[x.length - 1] + " != " + expected);
                }
                if (mode.equals("steady") && step == 19) {
                    break;
                }
                if (mode.equals("forever")) {
                    if (step == 0) {
                        System.out.println("rank " + rank + " reducing");
                    }
                    step = 1;
                }
            }
            if (settings) {
                // Through the settings the engine reads them with (HOROVOD_* stand-ins included).
                java.util.Map<String, String> env = System.getenv();
                System.out.println("rank " + rank + " settings fusion=" + KoloSettings.FUSION_THRESHOLD.from(env)
                        + " cycle=" + KoloSettings.CYCLE_TIME.from(env) + " cache=" + KoloSettings.CACHE_CAPACITY.from(env)
                        + " timeline=" + KoloSettings.TIMELINE.from(env) + " markCycles="
                        + KoloSettings.TIMELINE_MARK_CYCLES.from(env) + " stallCheck="
                        + (KoloSettings.STALL_CHECK_DISABLE.from(env).equals("on") ? "off"
                        : KoloSettings.STALL_CHECK_TIME_SECONDS.from(env))
                        + " host=" + System.getenv("KOLO_HOSTNAME") + " local=" + Kolo.localRank() + "/"
                        + Kolo.localSize() + " wd=" + Path.of("").toAbsolutePath());
            }
            System.out.println("rank " + rank + " ok");
            Kolo.shutdown();
        } catch (KoloException e) {
            System.out.println("rank " + rank + " failed fast after " + (System.nanoTime() - start) / 1_000_000
                    + " ms: " + e.getClass().getSimpleName() + ": " + e.getMessage());
            System.exit(1);
        }
    }

    /** Joins the job and runs {@code steps} checked allreduce steps. */
    private static void steps(int rank, int steps) {
        Kolo.init();
        float[] x = new float[100_000];
        for (int step = 0; step < steps; step++) {
            Arrays.fill(x, rank + step);
            Kolo.allreduce(x, ReduceOp.SUM);
            float expected = Kolo.size() * (float) step + Kolo.size() * (Kolo.size() - 1) / 2f;
            if (x[x.length - 1] != expected) {
                throw new IllegalStateException("wrong sum " + x[x.length - 1] + " != " + expected);
            }
        }
    }

    /** Modes whose failures nobody catches, as in a program that does not expect them. */
    private static void uncaught(String mode, int rank) throws InterruptedException {
        Kolo.init();
        if (mode.equals("uncaught-never-call") && rank == 2) {
            Thread.sleep(60_000);
        }
        if (mode.equals("uncaught-throw-finally")) {
            try {
                reduceUntilRank2Throws(rank, "uncaught-throw");
            } finally {
                Kolo.shutdown();
            }
            return;
        }
        reduceUntilRank2Throws(rank, mode);
        Kolo.shutdown();
    }

    private static void reduceUntilRank2Throws(int rank, String mode) {
        float[] x = new float[1000];
        for (int step = 0; step < 1000; step++) {
            if (mode.equals("uncaught-throw") && rank == 2 && step == 20) {
                throw new IllegalStateException("injected failure at iteration 20");
            }
            Kolo.allreduce(x, ReduceOp.SUM);
        }
    }
}
