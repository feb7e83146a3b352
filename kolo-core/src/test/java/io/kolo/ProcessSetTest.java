package io.kolo;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Process sets with ranks as threads: each collective within a set, independence of sets, and bad input. */
class ProcessSetTest {
    private static final Map<String, String> DYNAMIC = Map.of("KOLO_DYNAMIC_PROCESS_SETS", "1");

    @Test
    void disjointSetsReduceAmongTheirOwnRanks() {
        List<float[]> out = Ranks.run(4, DYNAMIC, comm -> {
            ProcessSet even = comm.addProcessSet(0, 2);
            ProcessSet odd = comm.addProcessSet(1, 3);
            assertEquals(1, even.id());
            assertEquals(2, odd.id());
            ProcessSet mine = comm.rank() % 2 == 0 ? even : odd;
            ProcessSet other = mine == even ? odd : even;
            assertTrue(mine.included());
            assertFalse(other.included());
            assertEquals(comm.rank() / 2, mine.rank());
            assertEquals(-1, other.rank());
            assertEquals(2, mine.size());
            assertEquals(List.of(0, 1, 2, 3), comm.globalProcessSet().ranks());
            assertEquals(3, comm.processSets().size());
            assertSame(comm, comm.on(comm.globalProcessSet()));   // the global set's collectives are the communicator's
            assertSame(comm.on(mine), comm.on(mine));             // made once per set, not per call
            float[] x = {comm.rank() + 1, 10 * (comm.rank() + 1)};
            for (int i = 0; i < 20; i++) {
                // Repeated: the set's response cache and its eager path take over after the first.
                x[0] = comm.rank() + 1;
                x[1] = 10 * (comm.rank() + 1);
                comm.on(mine).allreduce(x, ReduceOp.SUM);
            }
            return x;
        });
        assertArrayEquals(new float[]{4, 40}, out.get(0));   // ranks 0 and 2: 1 + 3
        assertArrayEquals(new float[]{6, 60}, out.get(1));   // ranks 1 and 3: 2 + 4
        assertArrayEquals(new float[]{4, 40}, out.get(2));
        assertArrayEquals(new float[]{6, 60}, out.get(3));
    }

    @Test
    void everyCollectiveRunsAmongTheSetsRanksInSetOrder() {
        // Set {1, 3, 4} of a job of 5: set ranks 0, 1, 2. Ranks 0 and 2 stay out and run a global op meanwhile.
        List<String> out = Ranks.run(5, DYNAMIC, comm -> {
            ProcessSet set = comm.addProcessSet(4, 1, 3);
            if (!set.included()) {
                float[] g = {1};
                comm.on(comm.globalProcessSet()).allreduce(g, ReduceOp.SUM);
                return "out " + g[0];
            }
            int r = comm.rank();
            StringBuilder sb = new StringBuilder();
            double[] avg = {r};
            comm.on(set).allreduce(avg, ReduceOp.AVERAGE);
            sb.append(Math.abs(avg[0] - 8 / 3.0) < 1e-12 ? "avg ok" : "avg " + avg[0]);
            sb.append(" gather ").append(Arrays.toString(comm.on(set).allgather(new int[]{r})));
            long[] b = {r == 3 ? 33 : -1};
            comm.on(set).broadcast(b, 3);                      // root: job rank 3
            sb.append(" bcast ").append(b[0]);
            Tensor rows = Tensor.of(new float[]{r, r, r}, 3);
            AlltoallResult a2a = comm.on(set).alltoall(rows, null);
            sb.append(" a2a ").append(Arrays.toString(a2a.tensor().floats()));
            Tensor rs = comm.on(set).reducescatter(Tensor.of(new float[]{1, 2, 3, 4, 5, 6}, 6), ReduceOp.SUM);
            sb.append(" rs ").append(Arrays.toString(rs.floats()));
            comm.on(set).barrier();
            sb.append(" obj ").append(comm.on(set).allgatherObject("r" + r));
            sb.append(" bobj ").append(comm.on(set).<String>broadcastObject(r == 4 ? "from4" : null, 4));
            List<Tensor> grouped = comm.on(set).groupedAllreduce(List.of(Tensor.of(new int[]{1}, 1), Tensor.of(new int[]{r}, 1)),
                    ReduceOp.SUM);
            sb.append(" grouped ").append(grouped.get(0).ints()[0]).append(',').append(grouped.get(1).ints()[0]);
            sb.append(" join ").append(comm.on(set).join());
            float[] g = {1};
            comm.on(comm.globalProcessSet()).allreduce(g, ReduceOp.SUM);
            return sb.append(" global ").append(g[0]).toString();
        });
        assertEquals("out 5.0", out.get(0));
        assertEquals("out 5.0", out.get(2));
        for (int r : new int[]{1, 3, 4}) {
            String s = out.get(r);
            int setRank = r == 1 ? 0 : r == 3 ? 1 : 2;
            float[][] rows = {{1, 1, 1}, {3, 3, 3}, {4, 4, 4}};
            float[] received = {rows[0][setRank], rows[1][setRank], rows[2][setRank]};
            float[] slice = setRank == 0 ? new float[]{3, 6} : setRank == 1 ? new float[]{9, 12} : new float[]{15, 18};
            assertEquals("avg ok gather [1, 3, 4] bcast 33 a2a " + Arrays.toString(received)
                    + " rs " + Arrays.toString(slice) + " obj [r1, r3, r4] bobj from4 grouped 3,8 join "
                    + s.substring(s.indexOf(" join ") + 6, s.indexOf(" global")) + " global 5.0", s);
            int lastJoined = Integer.parseInt(s.substring(s.indexOf(" join ") + 6, s.indexOf(" global")));
            assertTrue(lastJoined == 1 || lastJoined == 3 || lastJoined == 4, s);
        }
    }

    @Test
    void anOpWaitingInOneSetDoesNotHoldUpAnotherSetOnTheSameRanks() {
        // Ranks 1 and 2 are in both sets. Rank 0 starts an op in the big set that ranks 1 and 2 join only after they
        // ran 30 ops in the small set: if sets did not progress independently, this would deadlock and time out.
        List<String> out = Ranks.run(3, DYNAMIC, comm -> {
            ProcessSet big = comm.globalProcessSet();
            ProcessSet small = comm.addProcessSet(1, 2);
            if (comm.rank() == 0) {
                Handle<Tensor> h = comm.on(big).allreduceAsync("late", Tensor.of(new float[]{1}, 1), ReduceOp.SUM);
                return "big " + h.await(java.time.Duration.ofSeconds(60)).floats()[0];
            }
            float[] x = new float[1];
            for (int i = 0; i < 30; i++) {
                x[0] = 1;
                comm.on(small).allreduce(x, ReduceOp.SUM);
            }
            Handle<Tensor> h = comm.on(big).allreduceAsync("late", Tensor.of(new float[]{1}, 1), ReduceOp.SUM);
            return "small " + x[0] + " big " + h.await().floats()[0];
        });
        assertEquals(List.of("big 3.0", "small 2.0 big 3.0", "small 2.0 big 3.0"), out);
    }

    @Test
    void theSmallSetFinishesWhileTheOtherRankHasNotSubmittedYet() throws Exception {
        CountDownLatch smallDone = new CountDownLatch(2);
        List<Boolean> out = Ranks.run(3, DYNAMIC, comm -> {
            ProcessSet small = comm.addProcessSet(1, 2);
            if (comm.rank() == 0) {
                // Rank 0 holds back its part of a global op until the small set is done.
                boolean done = smallDone.await(60, TimeUnit.SECONDS);
                comm.allreduceAsync("g", Tensor.of(new float[]{1}, 1), ReduceOp.SUM).await();
                return done;
            }
            Handle<Tensor> global = comm.allreduceAsync("g", Tensor.of(new float[]{1}, 1), ReduceOp.SUM);
            for (int i = 0; i < 10; i++) {
                comm.on(small).allreduce(new float[]{i}, ReduceOp.MAX);
            }
            boolean globalStillWaiting = !global.poll();
            smallDone.countDown();
            return globalStillWaiting && global.await().floats()[0] == 3;
        });
        assertEquals(List.of(true, true, true), out);
    }

    @Test
    void aSetIsUsableTheMomentAddProcessSetReturnsOnEveryThread() {
        // The registration completes inside an engine cycle; the caller may submit to the new set before that cycle
        // ends, from its own thread while the engine's thread ran the cycle, or the other way round.
        // A virtual thread never drives the cycles itself, so the engine's thread runs them while the caller waits.
        List<Integer> out = Ranks.run(3, DYNAMIC, comm -> {
            int[] sum = {0};
            Throwable[] failed = {null};
            Thread t = Thread.ofVirtual().start(() -> {
                try {
                    for (int i = 0; i < 25; i++) {
                        ProcessSet s = comm.addProcessSet(i % 2 == 0 ? new int[]{0, 2} : new int[]{i % 3, (i + 1) % 3});
                        if (s.included()) {
                            sum[0] += comm.on(s).allreduce(new int[]{1}, ReduceOp.SUM)[0];
                        }
                        comm.removeProcessSet(s);
                    }
                } catch (Throwable e) {
                    failed[0] = e;
                }
            });
            t.join();
            if (failed[0] != null) {
                throw new AssertionError(failed[0]);
            }
            return sum[0];
        });
        // Even rounds: 13 sets {0, 2}; odd rounds: 12 sets of two ranks, each rank in 8 of them.
        assertEquals(List.of(13 * 2 + 8 * 2, 8 * 2, 13 * 2 + 8 * 2), out);
    }

    @Test
    void badRegistrationsFailOnEveryRankWithOneMessage() {
        for (int[][] asks : new int[][][]{
                {{}, {}, {}},
                {{0, 1, 1}, {0, 1, 1}, {0, 1, 1}},
                {{0, 7}, {0, 7}, {0, 7}},
                {{0, 1}, {0, 2}, {0, 2}},
                {{0, 1}, {0, 1}, {0, 1, 2, 3}}}) {
            List<String> errors = Ranks.run(3, DYNAMIC, comm -> {
                KoloException e = assertThrows(KoloException.class, () -> comm.addProcessSet(asks[comm.rank()]));
                // The job goes on: the global set still works after a refused registration.
                float[] x = {1};
                comm.allreduce(x, ReduceOp.SUM);
                assertEquals(3, x[0]);
                return e.getMessage();
            });
            assertEquals(1, errors.stream().distinct().count(), errors.toString());
            String m = errors.getFirst();
            assertTrue(m.startsWith("addProcessSet: "), m);
            String expected = switch (Arrays.deepToString(asks)) {
                case "[[], [], []]" -> "an empty set";
                case "[[0, 1, 1], [0, 1, 1], [0, 1, 1]]" -> "rank 1 twice";
                case "[[0, 7], [0, 7], [0, 7]]" -> "rank 7, which is not a rank of this job of 3";
                case "[[0, 1], [0, 2], [0, 2]]" -> "rank 0 [0, 1], rank 1 [0, 2], rank 2 [0, 2]";
                default -> "rank 2 rank 3, which is not a rank of this job of 3";
            };
            assertTrue(m.contains(expected), m + " should contain " + expected);
        }
    }

    @Test
    void misuseIsRefusedWithAClearError() {
        Ranks.run(3, DYNAMIC, comm -> {
            ProcessSet set = comm.addProcessSet(0, 1);
            KoloException again = assertThrows(KoloException.class, () -> comm.addProcessSet(1, 0));
            assertTrue(again.getMessage().contains("already form process set 1"), again.getMessage());
            if (comm.rank() == 2) {
                IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                        () -> comm.on(set).allreduce(new float[1], ReduceOp.SUM));
                assertTrue(e.getMessage().contains("rank 2 is not in process set 1"), e.getMessage());
            } else {
                IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                        () -> comm.on(set).broadcast(new float[1], 2));
                assertTrue(e.getMessage().contains("broadcast root 2 is not in process set 1"), e.getMessage());
            }
            IllegalArgumentException unregistered = assertThrows(IllegalArgumentException.class,
                    () -> comm.on(ProcessSet.of(0, 1)).allreduce(new float[1], ReduceOp.SUM));
            assertTrue(unregistered.getMessage().contains("is not registered"), unregistered.getMessage());
            IllegalArgumentException global = assertThrows(IllegalArgumentException.class,
                    () -> comm.removeProcessSet(comm.globalProcessSet()));
            assertTrue(global.getMessage().contains("cannot be removed"), global.getMessage());
            return null;
        });
        List<String> off = Ranks.run(2, comm -> assertThrows(IllegalStateException.class,
                () -> comm.addProcessSet(0)).getMessage());
        assertTrue(off.getFirst().contains("KOLO_DYNAMIC_PROCESS_SETS=1"), off.getFirst());
    }

    /**
     * Rank 0 adding a set while the others removed one: each call was an allgather of its own name, so every rank
     * waited for the others' op until KOLO_TIMEOUT_SECONDS (5 minutes by default). Now they fail at once, together.
     */
    @Test
    void ranksThatAddWhileOthersRemoveFailTogetherNamingEachCall() {
        List<String> errors = Ranks.run(3, Map.of("KOLO_DYNAMIC_PROCESS_SETS", "1", "KOLO_TIMEOUT_SECONDS", "20"),
                comm -> {
                    ProcessSet a = comm.addProcessSet(0, 1);
                    KoloException e = assertThrows(KoloException.class, () -> {
                        if (comm.rank() == 0) {
                            comm.addProcessSet(1, 2);
                        } else {
                            comm.removeProcessSet(a);
                        }
                    });
                    // The job goes on: the global set and the set still work.
                    float[] x = {1};
                    comm.allreduce(x, ReduceOp.SUM);
                    assertEquals(3, x[0]);
                    if (a.included()) {
                        assertEquals(2, comm.on(a).allreduce(new int[]{1}, ReduceOp.SUM)[0]);
                    }
                    return e.getMessage();
                });
        assertEquals(1, errors.stream().distinct().count(), errors.toString());
        assertEquals("the ranks made different process-set calls (rank 0 addProcessSet [1, 2], rank 1 removeProcessSet"
                + " of set 1, rank 2 removeProcessSet of set 1); call addProcessSet and removeProcessSet in the same"
                + " order on every rank, members or not", errors.getFirst());
    }

    /**
     * Rank 1 alone lacks KOLO_DYNAMIC_PROCESS_SETS=1: it refused addProcessSet on its own, and ranks 0 and 2 waited for
     * its part of the registration until KOLO_TIMEOUT_SECONDS. Now the refusal reaches every rank, which all fail at once
     * with one message naming rank 1 and why, and the job goes on.
     */
    @Test
    void aCallOneRankRefusesFailsOnEveryRankNamingItAndWhy() throws Exception {
        int port = Ranks.freePort();
        String secret = io.kolo.launch.JobSecret.generate().toHex();
        List<Object> said = Ranks.fromEnvironment(3, r -> {
            Map<String, String> env = new java.util.HashMap<>(Map.of("KOLO_RANK", Integer.toString(r), "KOLO_SIZE", "3",
                    "KOLO_RENDEZVOUS_ADDR", "127.0.0.1", "KOLO_RENDEZVOUS_PORT", Integer.toString(port),
                    "KOLO_SECRET", secret, "KOLO_TIMEOUT_SECONDS", "20"));
            if (r != 1) {
                env.put("KOLO_DYNAMIC_PROCESS_SETS", "1");
            }
            return env;
        }, comm -> {
            RuntimeException e = assertThrows(RuntimeException.class, () -> comm.addProcessSet(0, 1));
            float[] x = {1};
            comm.allreduce(x, ReduceOp.SUM);
            assertEquals(3f, x[0]);
            return e.getClass().getSimpleName() + ": " + e.getMessage();
        });
        String message = "addProcessSet was refused on rank 1: KOLO_DYNAMIC_PROCESS_SETS=1 is not set there: process"
                + " sets can be added or removed after Kolo.init only when the job sets it on every rank (or pass them to"
                + " Kolo.init(ProcessSet...)); no rank's process sets changed";
        assertEquals(List.of("KoloException: " + message, "IllegalStateException: " + message, "KoloException: " + message),
                said);
    }

    /**
     * Rank 2 removing a set its communicator never registered while the others remove set 1: rank 2 refused it alone
     * and the others waited until KOLO_TIMEOUT_SECONDS. Now every rank fails naming rank 2 and why; set 1 stays.
     */
    @Test
    void aRemovalOneRankRefusesFailsOnEveryRank() {
        List<String> said = Ranks.run(3, Map.of("KOLO_DYNAMIC_PROCESS_SETS", "1", "KOLO_TIMEOUT_SECONDS", "20"),
                comm -> {
                    ProcessSet a = comm.addProcessSet(0, 1);
                    RuntimeException e = assertThrows(RuntimeException.class,
                            () -> comm.removeProcessSet(comm.rank() == 2 ? ProcessSet.of(0, 1) : a));
                    assertTrue(a.isRegistered());
                    if (a.included()) {
                        assertEquals(2, comm.on(a).allreduce(new int[]{1}, ReduceOp.SUM)[0]);
                    }
                    return e.getClass().getSimpleName() + ": " + e.getMessage();
                });
        String message = "removeProcessSet was refused on rank 2: the set is not registered with that rank's"
                + " communicator (pass it to Kolo.init or Communicator.addProcessSet on every rank first); no rank's"
                + " process sets changed";
        assertEquals(List.of("KoloException: " + message, "KoloException: " + message,
                "IllegalArgumentException: " + message), said);
    }

    /**
     * Ranks 1 and 2 of set [1, 2] broadcasting from roots 1 and 2: the message said they submitted "root=0" and
     * "root=1", the roots' ranks inside the set, though a set's broadcast takes job ranks and its errors name job ranks.
     */
    @Test
    void aBroadcastRootMismatchInASetNamesTheRootsAsJobRanks() {
        List<String> out = Ranks.run(3, DYNAMIC, comm -> {
            ProcessSet set = comm.addProcessSet(1, 2);
            if (!set.included()) {
                return null;
            }
            return assertThrows(KoloException.class,
                    () -> comm.on(set).broadcast(new float[2], comm.rank())).getMessage();
        });
        assertEquals("mismatched broadcast 'broadcast.noname.1' in process set 1: rank 1 submitted FLOAT32[2] root=1,"
                + " rank 2 submitted FLOAT32[2] root=2", out.get(1));
        assertEquals(out.get(1), out.get(2));
    }

    /**
     * A set kept from a job that has ended (Kolo.shutdown(), an elastic reset) and used in the next one was called
     * "not registered", with advice to pass it to Kolo.init or Communicator.addProcessSet, which an elastic body cannot
     * do and which takes ranks, not sets. It now says the set's job ended and how to register it with this one.
     */
    @Test
    void aSetFromAJobThatHasEndedSaysSoInTheNext() {
        List<ProcessSet> first = Ranks.run(3, DYNAMIC, comm -> comm.addProcessSet(0, 1));
        List<String> said = Ranks.run(3, DYNAMIC, comm -> assertThrows(IllegalArgumentException.class,
                () -> comm.on(first.get(comm.rank())).allreduce(new float[1], ReduceOp.SUM)).getMessage());
        assertEquals("process set [0, 1] belongs to a job that has ended (Kolo.shutdown(), or an elastic reset): register"
                + " it with this one, by Kolo.init(sets) or, with KOLO_DYNAMIC_PROCESS_SETS=1, addProcessSet(0, 1) on every"
                + " rank (in an elastic job: at the start of Elastic.run's body, which every worker runs again after a reset)",
                said.getFirst());
    }

    @Test
    void removingASetFailsItsLaterOpsAndKeepsTheOthers() {
        List<String> out = Ranks.run(3, DYNAMIC, comm -> {
            ProcessSet a = comm.addProcessSet(0, 1);
            ProcessSet b = comm.addProcessSet(1, 2);
            // Kept from before the removal: its next call is refused as on(a) is afterwards.
            Collectives keptA = a.included() ? comm.on(a) : null;
            comm.removeProcessSet(a);
            assertFalse(a.isRegistered());
            assertEquals(List.of(0, 2), comm.processSets().stream().map(ProcessSet::id).toList());
            if (comm.rank() < 2) {
                IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                        () -> comm.on(a).allreduce(new float[1], ReduceOp.SUM));
                assertTrue(e.getMessage().contains("was removed"), e.getMessage());
                e = assertThrows(IllegalArgumentException.class, () -> keptA.allreduce(new float[1], ReduceOp.SUM));
                assertTrue(e.getMessage().contains("was removed"), e.getMessage());
            }
            ProcessSet c = comm.addProcessSet(0, 2);
            assertEquals(3, c.id());   // ids are not reused
            String s = "";
            if (b.included()) {
                s += " b " + comm.on(b).allreduce(new int[]{comm.rank()}, ReduceOp.SUM)[0];
            }
            if (c.included()) {
                s += " c " + comm.on(c).allreduce(new int[]{comm.rank()}, ReduceOp.SUM)[0];
            }
            return s.trim();
        });
        assertEquals(List.of("c 2", "b 3", "b 3 c 2"), out);
    }

    @Test
    void aStallInASetNamesTheJobRanksAndTheSet() {
        List<String> out = Ranks.run(3, Map.of("KOLO_DYNAMIC_PROCESS_SETS", "1",
                "KOLO_STALL_SHUTDOWN_TIME_SECONDS", "2", "KOLO_STALL_CHECK_TIME_SECONDS", "1"), comm -> {
            ProcessSet set = comm.addProcessSet(1, 2);
            if (comm.rank() == 1) {
                KoloException e = assertThrows(KoloException.class,
                        () -> comm.on(set).allreduce(new float[1], ReduceOp.SUM));
                return e.getMessage();
            }
            return null;
        });
        String m = out.get(1);
        assertNotNull(m);
        assertTrue(m.contains("in process set 1") && m.contains("submitted by ranks [1] but not by ranks [2]"), m);
        assertNull(out.get(2));
    }

    /**
     * The stall shutdown in a set fails the waiting member's op and ends the set on the member that never submitted it
     * too, with the same message; the rest of the job goes on. Before, rank 2's later op in the set waited for a rank
     * that had given up.
     */
    @Test
    void aStallShutdownInASetEndsItOnEveryMemberWithOneMessage() {
        // Held outside Kolo until rank 2 is done: a global op waiting as long would stall too.
        CountDownLatch rank2Done = new CountDownLatch(1);
        List<String> out = Ranks.run(3, Map.of("KOLO_DYNAMIC_PROCESS_SETS", "1", "KOLO_TIMEOUT_SECONDS", "20",
                "KOLO_STALL_SHUTDOWN_TIME_SECONDS", "2", "KOLO_STALL_CHECK_TIME_SECONDS", "1"), comm -> {
            ProcessSet set = comm.addProcessSet(1, 2);
            String said = null;
            if (comm.rank() == 1) {
                said = assertThrows(KoloException.class, () -> comm.on(set).allreduce(new float[1], ReduceOp.SUM))
                        .getMessage();
            } else if (comm.rank() == 2) {
                Thread.sleep(4000);
                said = assertThrows(KoloException.class, () -> comm.on(set).allreduceAsync("late", Tensor.of(new float[1]),
                        ReduceOp.SUM).await()).getMessage();
                rank2Done.countDown();
            }
            assertTrue(rank2Done.await(30, TimeUnit.SECONDS));
            float[] x = {1};
            comm.allreduce(x, ReduceOp.SUM);
            assertEquals(3f, x[0]);
            return said;
        });
        String stalled = "stalled: allreduce 'allreduce.noname.1' in process set 1 was submitted by ranks [1] but not by"
                + " ranks [2]";
        String m = out.get(1);
        assertTrue(m.contains(stalled), m);
        String why = m.substring(m.indexOf("stalled: "));
        assertTrue(why.endsWith("process set 1 ended on each of its ranks"), why);
        assertTrue(out.get(2).endsWith(why), out.get(2) + " should end with " + why);
    }

    @Test
    void hierarchicalAllreduceInsideASetSpreadOverHosts() {
        // 2 hosts x 3 ranks; the set takes two ranks on each host, so its own hierarchy is 2 x 2.
        List<Double> out = Ranks.runHosts(2, 3, Map.of("KOLO_DYNAMIC_PROCESS_SETS", "1",
                "KOLO_HIERARCHICAL_ALLREDUCE", "1"), comm -> {
            ProcessSet set = comm.addProcessSet(0, 1, 3, 4);
            if (!set.included()) {
                return -1.0;
            }
            double[] x = new double[100_000];
            Arrays.fill(x, comm.rank());
            comm.on(set).allreduce(x, ReduceOp.SUM);
            for (double v : x) {
                assertEquals(8.0, v);
            }
            return x[0];
        });
        assertEquals(List.of(8.0, 8.0, -1.0, 8.0, 8.0, -1.0), out);
    }

    @Test
    void eachSetWritesItsOwnTimeline(@TempDir Path dir) throws Exception {
        Path timeline = dir.resolve("timeline.json");
        Ranks.run(3, Map.of("KOLO_DYNAMIC_PROCESS_SETS", "1", "KOLO_TIMELINE", timeline.toString()), comm -> {
            ProcessSet set = comm.addProcessSet(1, 2);
            if (set.included()) {
                comm.on(set).allreduceAsync("in.the.set", Tensor.of(new float[4], 4), ReduceOp.SUM).await();
            }
            comm.allreduceAsync("in.the.job", Tensor.of(new float[4], 4), ReduceOp.SUM).await();
            return null;
        });
        String global = Files.readString(timeline);
        String ofSet = Files.readString(dir.resolve("timeline.set1.json"));
        assertTrue(global.contains("in.the.job") && !global.contains("in.the.set"), global);
        assertTrue(ofSet.contains("in.the.set") && !ofSet.contains("in.the.job"), ofSet);
    }
}
