package io.kolo;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** KOLO_LOG_LEVEL=debug says where each rank is and how it talks to the others; the default level says nothing. */
class JoinLogJobTest {

    @Test
    void debugSaysHowEachRankJoinedAndTheDefaultIsQuiet() throws Exception {
        List<ProcessRanks.Exit> debug = ProcessRanks.run(2, Main.class, List.of(),
                Map.of("KOLO_LOG_LEVEL", "debug", "KOLO_TRANSPORT", "tcp", "KOLO_FUSION_THRESHOLD", "1048576"), 60);
        for (ProcessRanks.Exit e : debug) {
            assertEquals(0, e.code(), e.output());
            String line = e.output().lines().filter(l -> l.contains("rank " + e.rank() + " of 2 joined in "))
                    .findFirst().orElseThrow(() -> new AssertionError(e.output()));
            assertTrue(line.matches(".*rank " + e.rank() + " of 2 joined in \\d+ ms: local rank " + e.rank()
                    + " of 2, cross rank 0 of 1; TcpTransport\\[rank " + e.rank() + " of 2]; fusion threshold 1048576"
                    + " bytes, cycle time [0-9.]+ ms, response cache \\d+ entries, compression NONE, timeout .*"), line);
        }
        for (ProcessRanks.Exit e : ProcessRanks.run(2, Main.class, List.of(), Map.of(), 60)) {
            assertEquals(0, e.code(), e.output());
            assertFalse(e.output().contains("joined in"), e.output());
        }
    }

    /** Joins, reduces once, leaves. */
    public static final class Main {
        public static void main(String[] args) {
            try (Communicator comm = Communicator.fromEnvironment(System.getenv())) {
                comm.allreduce(new float[]{1}, ReduceOp.SUM);
            }
        }
    }
}
