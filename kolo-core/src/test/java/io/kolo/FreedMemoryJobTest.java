package io.kolo;

import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A rank that frees a tensor's memory (closes its arena) while the op runs: every rank names that op and the cause.
 * Before, the rank itself blamed Kolo's shared memory ("shared memory unmapped"), and a rank reading the freed memory
 * straight from it blamed the kernel copy, advising KOLO_SHM_SINGLE_COPY=0.
 */
class FreedMemoryJobTest {

    @Test
    void everyRankSaysTheTensorWasFreedWhileItsOpRan() throws Exception {
        List<ProcessRanks.Exit> exits = ProcessRanks.run(2, Main.class, List.of(), Map.of(), 120);
        String why = "rank 0: the memory of allreduce 'grad' was freed (its Arena closed) before the op completed;"
                + " keep a tensor's memory alive until its handle's await() has returned";
        assertTrue(exits.get(0).output().contains("failed: " + why), exits.get(0).output());
        // Rank 1 names rank 0's failure, or (when its own read fails first) what it found in rank 0's memory.
        String out1 = exits.get(1).output();
        assertTrue(out1.contains("rank 0 failed: " + why) || out1.contains("rank 1 could not read 262144 bytes from"
                + " rank 0's memory (process_vm_readv: EFAULT): rank 0 no longer has it mapped, as when a tensor's"
                + " memory is freed (its Arena closed) before its op has completed"), out1);
    }

    /** One rank: a 4 MiB allreduce (read straight from the sender's memory where the system allows it). */
    public static final class Main {
        public static void main(String[] args) throws Exception {
            try (Communicator comm = Communicator.fromEnvironment(System.getenv())) {
                Handle<Tensor> h;
                try (Arena arena = Arena.ofShared()) {
                    MemorySegment grad = arena.allocate(4L << 20, 64);
                    if (comm.rank() == 1) {
                        Thread.sleep(300);   // rank 0's arena is closed by the time the op runs
                    }
                    h = comm.allreduceAsync("grad", Tensor.of(grad, DataType.FLOAT32), ReduceOp.SUM);
                    if (comm.rank() == 1) {
                        h.await();
                    }
                }
                h.await();
            } catch (KoloException e) {
                System.out.println("rank failed: " + e.getMessage());
            }
        }
    }
}
