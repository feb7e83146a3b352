package io.kolo;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Static and dynamic process sets with ranks as separate processes over shared memory and TCP. */
class ProcessSetJobTest {

    @Test
    void staticSetsOverSharedMemory() throws Exception {
        check(Map.of(), 4);
    }

    @Test
    void staticSetsOverTcp() throws Exception {
        check(Map.of("KOLO_TRANSPORT", "tcp"), 3);
    }

    private static void check(Map<String, String> settings, int size) throws Exception {
        List<ProcessRanks.Exit> exits = ProcessRanks.run(size, Main.class, List.of(), settings, 120);
        for (ProcessRanks.Exit e : exits) {
            assertEquals(0, e.code(), "rank " + e.rank() + " failed:\n" + e.output());
            // Set "first": ranks 0..size-2; set "last": ranks 1..size-1. Sums of (rank + 1) over each, 200 times.
            int first = (size - 1) * size / 2;
            int last = size * (size + 1) / 2 - 1;
            String expected = (e.rank() <= size - 2 ? "first " + first : "")
                    + (e.rank() >= 1 ? " last " + last : "");
            assertTrue(e.output().contains("sets:" + expected.trim() + ";"), "rank " + e.rank() + ": " + e.output());
        }
    }

    /**
     * Kolo.shutdown() then Kolo.init(sameSets), as a program running a second job does: the second init was refused,
     * "already registered with another communicator (several ranks in one JVM ...)", and the sets stayed unusable.
     */
    @Test
    void staticSetsRegisterAgainAfterShutdownAndInit() throws Exception {
        List<ProcessRanks.Exit> exits = ProcessRanks.run(3, Again.class, List.of(), Map.of(), 120);
        for (ProcessRanks.Exit e : exits) {
            assertEquals(0, e.code(), "rank " + e.rank() + " failed:\n" + e.output());
            String expected = e.rank() <= 1 ? "jobs: 2 false 2;" : "jobs: false;";
            assertTrue(e.output().contains(expected), "rank " + e.rank() + ": " + e.output());
        }
    }

    /**
     * Kolo.init(ProcessSet.of(0, 7)) in a job of 3 failed on every rank with "addProcessSet: rank 7, ...", a call the
     * program never made; it now names Kolo.init(ProcessSet...).
     */
    @Test
    void aBadStaticSetIsReportedAsKoloInitsOnEveryRank() throws Exception {
        List<ProcessRanks.Exit> exits = ProcessRanks.run(3, BadStatic.class, List.of(), Map.of(), 120);
        for (ProcessRanks.Exit e : exits) {
            assertEquals(0, e.code(), "rank " + e.rank() + " failed:\n" + e.output());
            assertTrue(e.output().contains("refused: Kolo.init(ProcessSet...): rank 7, which is not a rank of this job"
                    + " of 3; a process set lists each of its ranks once, from 0 to 2"), e.output());
        }
    }

    /** One rank: a static set naming a rank the job does not have. */
    public static final class BadStatic {
        public static void main(String[] args) {
            try {
                Kolo.init(ProcessSet.of(0, 7));
                System.out.println("accepted");
            } catch (KoloException e) {
                System.out.println("refused: " + e.getMessage());
            }
        }
    }

    /** One rank: two jobs in a row with the same static set of ranks 0 and 1. */
    public static final class Again {
        public static void main(String[] args) {
            ProcessSet pair = ProcessSet.of(0, 1);
            StringBuilder sb = new StringBuilder("jobs:");
            for (int job = 0; job < 2; job++) {
                Kolo.init(pair);
                if (pair.included()) {
                    sb.append(' ').append(Kolo.on(pair).allreduce(new int[]{1}, ReduceOp.SUM)[0]);
                }
                Kolo.barrier();
                Kolo.shutdown();
                if (job == 0) {
                    sb.append(' ').append(pair.isRegistered());
                }
            }
            System.out.println(sb.append(';'));
        }
    }

    /** One rank: two overlapping static sets, each reducing 200 times (the cache's and eager path's case). */
    public static final class Main {
        public static void main(String[] args) {
            int size = Integer.parseInt(System.getenv("KOLO_SIZE"));
            int[] first = new int[size - 1];
            int[] last = new int[size - 1];
            for (int i = 0; i < size - 1; i++) {
                first[i] = i;
                last[i] = i + 1;
            }
            ProcessSet a = ProcessSet.of(first);
            ProcessSet b = ProcessSet.of(last);
            try (Communicator comm = Communicator.fromEnvironment(System.getenv(), a, b)) {
                StringBuilder sb = new StringBuilder("sets:");
                for (ProcessSet s : List.of(a, b)) {
                    if (!s.included()) {
                        continue;
                    }
                    int[] x = new int[1];
                    for (int i = 0; i < 200; i++) {
                        x[0] = comm.rank() + 1;
                        comm.on(s).allreduce(x, ReduceOp.SUM);
                    }
                    sb.append(s == a ? "first " : " last ").append(x[0]);
                }
                comm.barrier();
                System.out.println(sb.toString().replace("sets: ", "sets:") + ";");
            }
        }
    }
}
