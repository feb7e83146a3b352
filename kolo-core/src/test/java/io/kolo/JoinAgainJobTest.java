package io.kolo;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Ranks that leave a job and join a new one in the same processes (hvd.shutdown() then hvd.init()), with rank 0
 * serving the store at a fixed address as under mpirun or srun with KOLO_RENDEZVOUS_ADDR. A rank joining again could
 * reach rank 0's last store while it was closing ("did not accept this rank: closed the connection during the
 * handshake"), or read the last job's keys from it.
 */
class JoinAgainJobTest {

    @Test
    void ranksJoinFiveJobsInARowOverSharedMemoryAndTcp() throws Exception {
        for (String transport : List.of("shm", "tcp")) {
            List<ProcessRanks.Exit> exits = ProcessRanks.run(3, Main.class, List.of(),
                    Map.of("KOLO_TRANSPORT", transport), 120);
            // Every rank's output: the rank that fails is seldom the one whose wait times out.
            StringBuilder all = new StringBuilder();
            for (ProcessRanks.Exit e : exits) {
                all.append("\n--- rank ").append(e.rank()).append(", exit ").append(e.code()).append(":\n")
                        .append(e.output());
            }
            for (ProcessRanks.Exit e : exits) {
                assertEquals(0, e.code(), transport + ", rank " + e.rank() + " failed; every rank:" + all);
                assertEquals(List.of("job 0 ok", "job 1 ok", "job 2 ok", "job 3 ok", "job 4 ok"),
                        e.output().lines().filter(l -> l.startsWith("job ")).toList(), e.output());
            }
        }
    }

    /** Five jobs, one after the other, each an allreduce whose sum tells the job and its ranks apart. */
    public static final class Main {
        public static void main(String[] args) {
            for (int job = 0; job < 5; job++) {
                try (Communicator comm = Communicator.fromEnvironment(System.getenv())) {
                    float[] x = new float[65536];
                    java.util.Arrays.fill(x, comm.rank() + job);
                    comm.allreduce(x, ReduceOp.SUM);
                    float expected = comm.size() * (comm.size() - 1) / 2f + comm.size() * job;
                    System.out.println(x[x.length - 1] == expected ? "job " + job + " ok"
                            : "job " + job + " wrong: " + x[x.length - 1] + " != " + expected);
                }
            }
        }
    }
}
