package io.kolo;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Bad input gives a clear error on every rank, never a hang. */
class BadInputTest {

    private static void assertEveryRankFails(List<Ranks.Outcome<Object>> outcomes, String... fragments) {
        for (int r = 0; r < outcomes.size(); r++) {
            Throwable e = outcomes.get(r).error();
            assertNotNull(e, "rank " + r + " should have failed");
            assertInstanceOf(KoloException.class, e, "rank " + r);
            for (String f : fragments) {
                assertTrue(e.getMessage().contains(f), "rank " + r + " message lacks '" + f + "': " + e.getMessage());
            }
        }
    }

    @Test
    void mismatchedShapesNameTheTensorAndEveryRanksSubmission() {
        var outcomes = Ranks.<Object>outcomes(3, Map.of(), comm -> comm.allreduceAsync("layer1.weight",
                Tensor.of(new float[comm.rank() == 1 ? 6 : 4]), ReduceOp.SUM).await());
        assertEveryRankFails(outcomes, "layer1.weight", "rank 0 submitted FLOAT32[4]", "rank 1 submitted FLOAT32[6]");
    }

    @Test
    void mismatchAfterTheNameIsCachedIsStillReportedOnEveryRank() {
        var outcomes = Ranks.<Object>outcomes(3, Map.of(), comm -> {
            for (int step = 0; step < 5; step++) {
                comm.allreduceAsync("w", Tensor.of(new float[4]), ReduceOp.SUM).await();
            }
            return comm.allreduceAsync("w", Tensor.of(new float[4]), comm.rank() == 2 ? ReduceOp.MAX : ReduceOp.SUM).await();
        });
        assertEveryRankFails(outcomes, "'w'", "rank 2 submitted FLOAT32[4] MAX", "rank 0 submitted FLOAT32[4] SUM");
    }

    /**
     * Horovod's commonest mistake, ranks that run different numbers of steps: the rank that shuts down first ends the
     * job under the other's extra op, which is told why and what to do, not only that Kolo was shut down.
     */
    @Test
    void aRankLeftWithAnExtraStepIsToldWhyAndWhatToDo() {
        var outcomes = Ranks.<Object>outcomes(2, Map.of(), comm -> {
            int steps = comm.rank() == 0 ? 4 : 3;
            for (int step = 0; step < steps; step++) {
                comm.allreduce(Tensor.of(new float[4]), ReduceOp.SUM);
            }
            comm.close();
            return null;
        });
        Throwable e = outcomes.get(0).error();
        assertNotNull(e, "rank 0's fourth step should have failed");
        assertTrue(e.getMessage().contains("another rank shut down (Kolo.shutdown())")
                && e.getMessage().contains("same number of steps") && e.getMessage().contains("join()"), e.getMessage());
        assertNull(outcomes.get(1).error());
    }

    @Test
    void mismatchedDataTypes() {
        var outcomes = Ranks.<Object>outcomes(2, Map.of(), comm -> comm.allreduceAsync("x",
                comm.rank() == 0 ? Tensor.of(new float[4]) : Tensor.of(new double[4]), ReduceOp.SUM).await());
        assertEveryRankFails(outcomes, "'x'", "FLOAT32", "FLOAT64");
    }

    @Test
    void mismatchedOps() {
        var outcomes = Ranks.<Object>outcomes(2, Map.of(), comm -> comm.allreduceAsync("x",
                Tensor.of(new float[4]), comm.rank() == 0 ? ReduceOp.SUM : ReduceOp.MAX).await());
        assertEveryRankFails(outcomes, "'x'", "SUM", "MAX");
    }

    @Test
    void mismatchedScaleFactors() {
        var outcomes = Ranks.<Object>outcomes(2, Map.of(), comm -> comm.allreduceAsync("x",
                Tensor.of(new float[4]), ReduceOp.SUM, comm.rank() == 0 ? 1.0 : 0.5, 1.0).await());
        assertEveryRankFails(outcomes, "'x'", "prescale=0.5");
    }

    @Test
    void mismatchedBroadcastRoots() {
        var outcomes = Ranks.<Object>outcomes(3, Map.of(), comm -> comm.broadcastAsync("params",
                Tensor.of(new float[4]), comm.rank() == 2 ? 1 : 0).await());
        assertEveryRankFails(outcomes, "'params'", "root=1", "root=0");
    }

    @Test
    void broadcastFromANonexistentRoot() {
        var outcomes = Ranks.<Object>outcomes(2, Map.of(), comm -> comm.broadcastAsync("params",
                Tensor.of(new float[4]), 5).await());
        assertEveryRankFails(outcomes, "'params'", "root rank 5", "0..1");
    }

    @Test
    void allgatherWithDifferentRowLengths() {
        var outcomes = Ranks.<Object>outcomes(2, Map.of(), comm -> comm.allgatherAsync("rows",
                Tensor.of(new float[6], 2, comm.rank() == 0 ? 3 : 2)).await());
        // rank 1's 2x2 needs only 4 of its 6 floats; the dims still disagree
        assertEveryRankFails(outcomes, "'rows'", "[2, 3]", "[2, 2]", "all dimensions but the first");
    }

    @Test
    void alltoallSplitsThatDoNotAddUp() {
        var outcomes = Ranks.<Object>outcomes(2, Map.of(), comm -> comm.alltoallAsync("a2a",
                Tensor.of(new int[4]), comm.rank() == 1 ? new long[]{1, 1} : new long[]{2, 2}).await());
        assertEveryRankFails(outcomes, "'a2a'", "rank 1", "summing to 2");
    }

    /** Splits whose sum wraps around to the rows: named as such, not as the transport's "sendBytes[0] is negative". */
    @Test
    void alltoallSplitsSummingPastALong() {
        var outcomes = Ranks.<Object>outcomes(3, Map.of(), comm -> comm.alltoallAsync("a2a",
                Tensor.of(new int[0]), new long[]{Long.MAX_VALUE, Long.MAX_VALUE, 2}).await());
        assertEveryRankFails(outcomes, "'a2a'", "rank 0 gave splits [9223372036854775807, 9223372036854775807, 2]"
                + " summing to more than 9223372036854775807 rows");
    }

    @Test
    void mismatchedKinds() {
        var outcomes = Ranks.<Object>outcomes(2, Map.of(), comm -> comm.rank() == 0
                ? comm.allreduceAsync("t", Tensor.of(new float[2]), ReduceOp.SUM).await()
                : comm.broadcastAsync("t", Tensor.of(new float[2]), 0).await());
        assertEveryRankFails(outcomes, "'t'", "broadcast");
    }

    /**
     * Unnamed ops of different kinds in one place: each unnamed op's name counts its own kind, so rank 1's broadcast
     * never met ranks 0 and 2's allreduce and every rank waited out KOLO_TIMEOUT_SECONDS. Now every rank fails at once
     * naming each rank's op, and the job goes on.
     */
    @Test
    void unnamedOpsOfDifferentKindsInOnePlaceFailEveryRankNamingEach() {
        var outcomes = Ranks.<Object>outcomes(3, Map.of("KOLO_TIMEOUT_SECONDS", "20"), comm -> {
            float[] x = {1};
            comm.allreduce(x, ReduceOp.SUM);
            try {
                if (comm.rank() == 1) {
                    comm.broadcast(new float[4], 0);
                } else {
                    comm.allreduce(new float[4], ReduceOp.SUM);
                }
                return "no error";
            } finally {
                float[] y = {1};
                comm.allreduce("after", Tensor.of(y), ReduceOp.SUM);
                assertEquals(3f, y[0]);
            }
        });
        assertEveryRankFails(outcomes, "the ranks submitted different collectives as their unnamed op #2: "
                + "rank 0 allreduce 'allreduce.noname.2' FLOAT32[4] SUM, rank 1 broadcast 'broadcast.noname.1' FLOAT32[4]"
                + " root=0, rank 2 allreduce 'allreduce.noname.2' FLOAT32[4] SUM; unnamed ops are matched by their order"
                + " on each rank: call the same collectives in the same order on every rank, or give them names");
    }

    /**
     * An unnamed grouped allreduce on one rank and a plain unnamed allreduce on the other: the group's names
     * ({@code grouped_allreduce.noname.1.0}) never met the plain one's and both ranks waited out KOLO_TIMEOUT_SECONDS.
     * Now both fail at once naming each, every member of the group with them, and the job goes on.
     */
    @Test
    void anUnnamedGroupAgainstAPlainAllreduceFailsBothRanksAtOnce() {
        var outcomes = Ranks.<Object>outcomes(2, Map.of("KOLO_TIMEOUT_SECONDS", "20"), comm -> {
            try {
                if (comm.rank() == 0) {
                    comm.groupedAllreduce(List.of(Tensor.of(new float[2]), Tensor.of(new float[3])), ReduceOp.SUM);
                } else {
                    comm.allreduce(new float[2], ReduceOp.SUM);
                }
                return "no error";
            } finally {
                float[] y = {1};
                comm.allreduce("after", Tensor.of(y), ReduceOp.SUM);
                assertEquals(2f, y[0]);
            }
        });
        assertEveryRankFails(outcomes, "the ranks submitted different collectives as their unnamed op #1: "
                + "rank 0 allreduce 'grouped_allreduce.noname.1.0' FLOAT32[2] SUM as 1 of a group of 2, "
                + "rank 1 allreduce 'allreduce.noname.1' FLOAT32[2] SUM; unnamed ops are matched by their order");
    }

    /**
     * A rank with an extra step before a barrier: its allreduce and the other's barrier, both unnamed, held the same
     * place and never met, and both ranks waited out KOLO_TIMEOUT_SECONDS. Now both fail at once, naming each.
     */
    @Test
    void anExtraStepBeforeABarrierFailsBothRanksAtOnce() {
        var outcomes = Ranks.<Object>outcomes(2, Map.of("KOLO_TIMEOUT_SECONDS", "20"), comm -> {
            int steps = comm.rank() == 0 ? 2 : 1;
            for (int step = 0; step < steps; step++) {
                comm.allreduce(new float[2], ReduceOp.SUM);
            }
            comm.barrier();
            return "no error";
        });
        assertEveryRankFails(outcomes, "the ranks submitted different collectives as their unnamed op #2: rank 0"
                + " allreduce 'allreduce.noname.2' FLOAT32[2] SUM, rank 1 barrier 'barrier.noname.1'; unnamed ops");
    }

    /** The order check leaves alone what is legal: named ops in any order, and unnamed ops of mixed kinds in one order. */
    @Test
    void namedOpsInAnyOrderAndUnnamedOpsInOneOrderStillRun() {
        List<Object> sums = Ranks.run(3, comm -> {
            List<Handle<Tensor>> handles = new java.util.ArrayList<>();
            for (int round = 0; round < 20; round++) {
                // Named: each rank its own order of kinds.
                for (int k = 0; k < 3; k++) {
                    int which = (k + comm.rank() + round) % 3;
                    String name = "n" + round + "." + which;
                    handles.add(which == 1 ? comm.broadcastAsync(name, Tensor.of(new float[]{1, 1}), 0)
                            : comm.allreduceAsync(name, Tensor.of(new float[]{1, 1}), ReduceOp.SUM));
                }
                // Unnamed: kinds mixed, in one order on every rank.
                handles.add(comm.allreduceAsync(null, Tensor.of(new float[]{1, 1}), ReduceOp.SUM));
                handles.add(comm.broadcastAsync(null, Tensor.of(new float[]{1, 1}), round % 3));
                handles.add(comm.allgatherAsync(null, Tensor.of(new float[]{1, 1})));
            }
            double sum = 0;
            for (Handle<Tensor> h : handles) {
                for (float v : h.await().floats()) {
                    sum += v;
                }
            }
            return sum;
        });
        // Per round: named 2 allreduces (3+3 each) and a broadcast (1+1); unnamed 6 + 2 + 6 ones.
        assertEquals(List.of(20 * 28.0, 20 * 28.0, 20 * 28.0), sums);
    }

    /**
     * Ranks grouping different numbers of tensors under one name: every rank fails naming each rank's group size, and
     * the job goes on. Before, with rank 0's group the smaller, rank 0 completed and rank 1 waited out its timeout;
     * with rank 0's the larger, both did.
     */
    @Test
    void groupsOfDifferentSizesFailOnEveryRank() {
        for (int smaller : new int[]{0, 1}) {
            var outcomes = Ranks.<Object>outcomes(2, Map.of("KOLO_TIMEOUT_SECONDS", "20"), comm -> {
                List<Tensor> tensors = comm.rank() == smaller ? List.of(Tensor.of(new float[2]))
                        : List.of(Tensor.of(new float[2]), Tensor.of(new float[3]));
                try {
                    return comm.groupedAllreduceAsync("grads", tensors, ReduceOp.SUM).await();
                } finally {
                    float[] x = {1};
                    comm.allreduce(x, ReduceOp.SUM);
                    assertEquals(2f, x[0]);
                }
            });
            assertEveryRankFails(outcomes, "mismatched allreduce 'grads.0'",
                    "rank " + smaller + " submitted FLOAT32[2] SUM as 1 of a group of 1",
                    "rank " + (1 - smaller) + " submitted FLOAT32[2] SUM as 1 of a group of 2");
        }
    }

    /**
     * An object one rank cannot serialise fails the object collective on every rank, saying why, and the job goes
     * on; before, that rank threw and the others waited out KOLO_TIMEOUT_SECONDS for its broadcast or allgather.
     */
    @Test
    void anObjectThatCannotBeSerialisedFailsEveryRank() {
        java.util.ArrayList<Object> unsendable = new java.util.ArrayList<>(List.of(new Object()));
        List<Object> messages = Ranks.run(3, Map.of("KOLO_TIMEOUT_SECONDS", "10"), comm -> {
            List<String> out = new java.util.ArrayList<>();
            RuntimeException e = assertThrows(RuntimeException.class,
                    () -> comm.broadcastObject(comm.rank() == 1 ? unsendable : null, 1));
            out.add(e.getMessage());
            e = assertThrows(RuntimeException.class,
                    () -> comm.allgatherObject(comm.rank() == 2 ? unsendable : "fine"));
            out.add(e.getMessage());
            out.add(comm.allgatherObject("r" + comm.rank()).toString());
            return out;
        });
        String why = "cannot serialise java.util.ArrayList: it holds a java.lang.Object, which is not Serializable";
        String notSent = "broadcastObject: the root could not send its object: " + why;
        String notGathered = "allgatherObject: rank [2] could not serialise its object (the error on that rank says why)";
        assertEquals(List.of(notSent, notGathered, "[r0, r1, r2]"), messages.get(0));
        assertEquals(List.of(why, notGathered, "[r0, r1, r2]"), messages.get(1));
        assertEquals(List.of(notSent, why, "[r0, r1, r2]"), messages.get(2));
    }

    @Test
    void duplicateNameInFlightIsRejectedAndTheFirstStillCompletes() {
        List<Object> results = Ranks.run(2, comm -> {
            float[] x = {1};
            Handle<Tensor> first = null;
            if (comm.rank() == 0) {
                first = comm.allreduceAsync("dup", Tensor.of(x), ReduceOp.SUM);
                IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                        () -> comm.allreduceAsync("dup", Tensor.of(new float[1]), ReduceOp.SUM));
                assertTrue(e.getMessage().contains("'dup' is already in flight on rank 0"), e.getMessage());
                first.await();
            } else {
                Thread.sleep(200);
                comm.allreduceAsync("dup", Tensor.of(x), ReduceOp.SUM).await();
            }
            return x[0];
        });
        assertEquals(List.of(2f, 2f), results);
    }

    @Test
    void stalledOpFailsOnTheRanksWaitingForIt() {
        var outcomes = Ranks.<Object>outcomes(2, Map.of("KOLO_STALL_CHECK_TIME_SECONDS", "1",
                "KOLO_STALL_SHUTDOWN_TIME_SECONDS", "2"), comm -> {
            if (comm.rank() == 0) {
                return comm.allreduceAsync("forgotten", Tensor.of(new float[1]), ReduceOp.SUM).await();
            }
            Thread.sleep(5000);
            return "rank 1 never submitted";
        });
        Throwable e = outcomes.get(0).error();
        assertNotNull(e);
        assertTrue(e.getMessage().contains("'forgotten'") && e.getMessage().contains("not by ranks [1]"), e.getMessage());
    }

    /**
     * The stall shutdown failed the op on the rank that waited for it, and told the rank that never submitted it
     * nothing: its next collective waited for a job that had given up. Now the job ends on every rank with one message.
     */
    @Test
    void aStallShutdownEndsTheRankThatNeverSubmittedWithTheSameMessage() {
        var outcomes = Ranks.<Object>outcomes(2, Map.of("KOLO_STALL_CHECK_TIME_SECONDS", "1",
                "KOLO_STALL_SHUTDOWN_TIME_SECONDS", "2", "KOLO_TIMEOUT_SECONDS", "20"), comm -> {
            if (comm.rank() == 0) {
                comm.allreduceAsync("forgotten", Tensor.of(new float[1]), ReduceOp.SUM).await();
                return "rank 0's op completed";
            }
            // Rank 1 is busy elsewhere, past the shutdown time, and then calls a collective of its own.
            Thread.sleep(5000);
            comm.allreduceAsync("next", Tensor.of(new float[1]), ReduceOp.SUM).await();
            return "rank 1's op completed";
        });
        Throwable first = outcomes.get(0).error();
        assertNotNull(first, "rank 0 should have failed");
        assertInstanceOf(KoloException.class, first);
        String stalled = first.getMessage().substring(Math.max(0, first.getMessage().indexOf("stalled: ")));
        assertTrue(stalled.startsWith("stalled: allreduce 'forgotten' was submitted by ranks [0] but not by ranks [1]"),
                first.getMessage());
        Throwable second = outcomes.get(1).error();
        assertNotNull(second, "rank 1 should have failed");
        assertInstanceOf(KoloException.class, second);
        assertTrue(second.getMessage().contains(stalled), second.getMessage() + " should say " + stalled);
    }

    /**
     * Two ranks each waiting for an op the other never submitted (names that differ): each failed with a message of its
     * own op only. Now both end with one message, which names the ops that had stalled when rank 0 looked.
     */
    @Test
    void aStallShutdownEndsRanksWaitingForDifferentOpsWithOneMessage() {
        var outcomes = Ranks.<Object>outcomes(2, Map.of("KOLO_STALL_CHECK_TIME_SECONDS", "1",
                "KOLO_STALL_SHUTDOWN_TIME_SECONDS", "2", "KOLO_TIMEOUT_SECONDS", "20"), comm ->
                comm.allreduceAsync(comm.rank() == 0 ? "loss" : "los", Tensor.of(new float[1]), ReduceOp.SUM).await());
        List<String> said = new java.util.ArrayList<>();
        for (var o : outcomes) {
            assertInstanceOf(KoloException.class, o.error());
            said.add(o.error().getMessage().substring(o.error().getMessage().indexOf("stalled: ")));
        }
        assertEquals(said.get(0), said.get(1));
        // Both ops, or the older alone when the other was not yet past the shutdown time as rank 0 looked.
        assertTrue(said.get(0).matches("stalled: allreduce 'los{1,2}' was submitted by ranks \\[[01]] but not by ranks"
                + " \\[[01]] for \\d+ s(; allreduce 'los{1,2}' .*)? \\(KOLO_STALL_SHUTDOWN_TIME_SECONDS\\); the missing"
                + " ranks never called (it|them), or called (it|them) under another name; Kolo stopped on every rank"),
                said.get(0));
    }

    /**
     * In-place ops write into the tensor: read-only memory is refused on the caller's thread on every rank, and the
     * job goes on (it failed the engine once the result was written, naming only the JDK's "Attempt to write a
     * read-only segment"). A broadcast's root only reads.
     */
    @Test
    void readOnlyMemoryForAnInPlaceOpIsRefusedBeforeItRuns() {
        List<Object> results = Ranks.run(2, comm -> {
            java.lang.foreign.MemorySegment ro = java.lang.foreign.Arena.ofAuto().allocate(16).asReadOnly();
            Tensor t = Tensor.of(ro, DataType.FLOAT32);
            for (org.junit.jupiter.api.function.Executable call : List.<org.junit.jupiter.api.function.Executable>of(
                    () -> comm.allreduce(t, ReduceOp.SUM),
                    () -> comm.allreduce("loss", t, ReduceOp.SUM),
                    () -> comm.allreduce(t, ReduceOp.AVERAGE, Compression.FP16),
                    () -> comm.groupedAllreduce(List.of(Tensor.of(new float[4]), t), ReduceOp.SUM))) {
                IllegalArgumentException e = assertThrows(IllegalArgumentException.class, call);
                assertTrue(e.getMessage().contains("allreduce")
                        && e.getMessage().contains(": the tensor's memory is read-only, and"), e.getMessage());
            }
            java.lang.foreign.MemorySegment root = java.lang.foreign.Arena.ofAuto().allocate(16);
            root.fill((byte) 1);
            Tensor b = comm.rank() == 0 ? Tensor.of(root.asReadOnly(), DataType.INT32)
                    : Tensor.of(new int[4]);
            comm.broadcast(b, 0);
            float[] x = {1};
            comm.allreduce(x, ReduceOp.SUM);
            return x[0] + " " + b.segment().get(java.lang.foreign.ValueLayout.JAVA_INT, 12);
        });
        assertEquals(List.of("2.0 16843009", "2.0 16843009"), results);
    }

    /**
     * A new ByteBuffer is big-endian: floats put through it were reduced as the bytes of other floats, and the sum of
     * 1 and 1 came back as garbage, with no error.
     */
    @Test
    void aBufferInTheOtherByteOrderIsRefused() {
        java.nio.ByteBuffer big = java.nio.ByteBuffer.allocateDirect(8).putFloat(0, 1f).putFloat(4, 1f);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> Tensor.of(big, DataType.FLOAT32));
        assertTrue(e.getMessage().contains("the buffer is BIG_ENDIAN but Kolo reads and writes FLOAT32 in this"
                + " machine's order, " + java.nio.ByteOrder.nativeOrder()), e.getMessage());
        Tensor.of(big, DataType.UINT8);   // bytes have no order
        Tensor.of(big.order(java.nio.ByteOrder.nativeOrder()), DataType.FLOAT32);
    }

    /** 2^62 + 1 floats are 2^64 + 4 bytes: an unchecked product wraps to 4, which one float seems to hold. */
    @Test
    void aShapeTooLargeForAnyMemoryIsRefusedNotWrapped() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> Tensor.of(new float[1], (1L << 62) + 1));
        assertTrue(e.getMessage().contains("shape [4611686018427387905] of FLOAT32 has more than"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> Tensor.of(new float[1], 1L << 32, 1L << 32));
        assertTrue(e.getMessage().contains("check the shape"), e.getMessage());
        assertEquals(0, Tensor.of(new float[0], 1L << 62, 0).elements());
    }

    /** Process sets given to a second Kolo.init were ignored; their first collective then said to pass them to it. */
    @Test
    void processSetsGivenToASecondInitAreRefused() {
        Kolo.init(Map.of());   // a job of one rank in this JVM
        try {
            Kolo.init();       // again, with nothing new: does nothing
            IllegalStateException e = assertThrows(IllegalStateException.class, () -> Kolo.init(ProcessSet.of(0)));
            assertTrue(e.getMessage().startsWith("Kolo is already initialised, so ProcessSet(id=-1, ranks=[0]) given to"
                    + " this Kolo.init is not registered: pass every process set to the first Kolo.init(...)"),
                    e.getMessage());
        } finally {
            Kolo.shutdown();
        }
    }

    @Test
    void usingKoloBeforeInitSaysToCallInit() {
        IllegalStateException e = assertThrows(IllegalStateException.class, Kolo::rank);
        assertTrue(e.getMessage().contains("Kolo.init()"));
    }

    @Test
    void badSettingNamesTheVariable() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> Communicator.local(2, Map.of("KOLO_FUSION_THRESHOLD", "lots")));
        assertTrue(e.getMessage().contains("KOLO_FUSION_THRESHOLD"), e.getMessage());
    }

    /**
     * A late rank's request that reached rank 0 in the round where the stall inspector looked was taken for missing:
     * the op, submitted by every rank, failed with "submitted by ranks [0, 1] but not by ranks []". Rounds 1.5 s apart
     * make that round the one past the 1 s shutdown time.
     */
    @Test
    void anOpEveryRankSubmittedIsNeverCalledStalled() {
        List<Object> sums = Ranks.run(2, Map.of("KOLO_CYCLE_TIME", "1500", "KOLO_STALL_CHECK_TIME_SECONDS", "1",
                "KOLO_STALL_SHUTDOWN_TIME_SECONDS", "1"), comm -> {
            float[] x = {1};
            comm.allreduce(x, ReduceOp.SUM);
            if (comm.rank() == 1) {
                Thread.sleep(2500);
            }
            x[0] = 1;
            comm.allreduce(x, ReduceOp.SUM);
            return x[0];
        });
        assertEquals(List.of(2f, 2f), sums);
    }

    /** A timed-out wait named the ranks that had submitted the op as "(ranks 0 had)" when that was one rank. */
    @Test
    void aTimedOutWaitNamesOneRankThatHadSubmittedAsARank() {
        List<Object> said = Ranks.run(2, comm -> {
            if (comm.rank() == 1) {
                Thread.sleep(5000);
                return comm.allreduceAsync("late", Tensor.of(new float[1]), ReduceOp.SUM).await().floats()[0];
            }
            Handle<Tensor> h = comm.allreduceAsync("late", Tensor.of(new float[]{1}), ReduceOp.SUM);
            // Rank 0 tells every rank what an op waits for once it has waited a second, at its next look (each second).
            KoloTimeoutException e = assertThrows(KoloTimeoutException.class, () -> h.await(Duration.ofSeconds(3)));
            h.await();
            return e.getMessage().replaceFirst("after \\d+ s \\(", "after N s (");
        });
        assertEquals("timed out after 3 s waiting for 'late': rank 1 had not submitted it after N s (rank 0 had); pass"
                + " await() a longer timeout if ranks legitimately wait this long", said.getFirst());
    }

    /** The stall settings accept any long of seconds; the largest failed rank 0's first round with "long overflow". */
    @Test
    void theLargestStallTimesMeanNever() {
        List<Object> sums = Ranks.run(2, Map.of("KOLO_STALL_CHECK_TIME_SECONDS", Long.toString(Long.MAX_VALUE),
                "KOLO_STALL_SHUTDOWN_TIME_SECONDS", "9223372037"), comm -> {
            float[] x = {1};
            comm.allreduce(x, ReduceOp.SUM);
            return x[0];
        });
        assertEquals(List.of(2f, 2f), sums);
    }

    /**
     * Shutdown is not paced by the cycle time: after a blocking op the engine's thread stayed away for a whole cycle
     * time, so with a huge one every rank's close() waited out KOLO_TIMEOUT_SECONDS and then warned.
     */
    @Test
    void aHugeCycleTimeDoesNotHoldShutdown() {
        List<Communicator> comms = Communicator.local(2, Map.of("KOLO_CYCLE_TIME", "1e12", "KOLO_TIMEOUT_SECONDS", "40"));
        List<Ranks.Outcome<Object>> closes = Ranks.outcomes(comms, comm -> {
            float[] x = {1};
            comm.allreduce(x, ReduceOp.SUM);
            assertEquals(2f, x[0]);
            long start = System.nanoTime();
            comm.close();
            return (System.nanoTime() - start) / 1_000_000_000L;
        });
        for (Ranks.Outcome<Object> c : closes) {
            assertTrue((Long) c.get() < 10, "close() took " + c.get() + " s");
        }
    }

    @Test
    void eagerAllreduceBytesMustBeASmallNonNegativeSize() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> Communicator.local(2, Map.of("KOLO_EAGER_ALLREDUCE_BYTES", "-1")));
        assertTrue(e.getMessage().contains("KOLO_EAGER_ALLREDUCE_BYTES='-1'"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class,
                () -> Communicator.local(2, Map.of("KOLO_EAGER_ALLREDUCE_BYTES", "104857600")));
        assertTrue(e.getMessage().contains("from 0 (off) to 1048576"), e.getMessage());
    }
}
