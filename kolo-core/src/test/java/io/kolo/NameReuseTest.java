package io.kolo;

import io.kolo.launch.JobSecret;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A name reused with a larger tensor after it ran from the response cache, as a metric or a last-batch loss does: the
 * small repeated allreduce that travels with the negotiation must follow the name's new request.
 */
class NameReuseTest {

    /** The sequence of the bug report; returns what each later op summed to. */
    static long[] grow(Communicator comm) {
        return grow(comm, false);
    }

    /** An allreduce of {@code a} named {@code name}, called blocking or submitted and awaited. */
    private static void sum(Communicator comm, boolean blocking, String name, int[] a) {
        if (blocking) {
            comm.allreduce(name, Tensor.of(a), ReduceOp.SUM);
        } else {
            comm.allreduceAsync(name, Tensor.of(a), ReduceOp.SUM).await();
        }
    }

    /** {@link #grow(Communicator)}, with the allreduces called blocking (the path that runs on the caller's thread) or not. */
    static long[] grow(Communicator comm, boolean blocking) {
        int n = comm.size();
        for (int k = 0; k < 2; k++) {
            int[] small = filled(289, comm.rank() + 1);
            sum(comm, blocking, "b", small);
            check(small, n * (n + 1) / 2, "b (small)");
        }
        int[] large = filled(4913, comm.rank() + 1);
        sum(comm, blocking, "b", large);
        check(large, n * (n + 1) / 2, "b (large)");
        int[] other = filled(10, 2);
        sum(comm, blocking, "other0", other);
        check(other, 2 * n, "other0");
        // The name goes on being used, at either size, with the eager path and without.
        for (int k = 0; k < 3; k++) {
            int[] again = filled(k % 2 == 0 ? 4913 : 289, 1);
            sum(comm, blocking, "b", again);
            check(again, n, "b (again " + k + ")");
        }
        return new long[]{large[0], other[0]};
    }

    private static int[] filled(int length, int value) {
        int[] a = new int[length];
        java.util.Arrays.fill(a, value);
        return a;
    }

    private static void check(int[] a, int expected, String what) {
        for (int v : a) {
            if (v != expected) {
                throw new AssertionError(what + ": element " + v + ", expected " + expected);
            }
        }
    }

    @ParameterizedTest
    @ValueSource(ints = {2, 3, 4})
    void aNameThatGrowsAfterItWasCachedStillWorksWithRanksAsThreads(int size) {
        for (long[] r : Ranks.run(size, NameReuseTest::grow)) {
            assertEquals(size * (size + 1) / 2, r[0]);
            assertEquals(2L * size, r[1]);
        }
    }

    @ParameterizedTest
    @ValueSource(ints = {2, 3, 4})
    void calledBlockingANameThatGrowsAfterItWasCachedStillWorks(int size) {
        // Odd ranks call blocking, even ones submit and await: either side may run it on the caller's thread.
        for (long[] r : Ranks.run(size, comm -> grow(comm, comm.rank() % 2 == 1 || size == 2))) {
            assertEquals(size * (size + 1) / 2, r[0]);
            assertEquals(2L * size, r[1]);
        }
    }

    @ParameterizedTest
    @ValueSource(ints = {2, 3, 4})
    void aNameThatGrowsAfterItWasCachedStillWorksOverTcpAndSharedMemory(int size) throws Exception {
        int port = Ranks.freePort();
        String secret = JobSecret.generate().toHex();
        List<Object> results = Ranks.fromEnvironment(size, r -> {
            Map<String, String> env = new HashMap<>();
            env.put("KOLO_RANK", Integer.toString(r));
            env.put("KOLO_SIZE", Integer.toString(size));
            env.put("KOLO_RENDEZVOUS_ADDR", "127.0.0.1");
            env.put("KOLO_RENDEZVOUS_PORT", Integer.toString(port));
            env.put("KOLO_SECRET", secret);
            // Half the ranks on another "host": shared memory inside each, TCP between them.
            env.put("KOLO_LOCAL_SIZE", Integer.toString(size / 2));
            env.put("KOLO_LOCAL_RANK", Integer.toString(r % (size / 2)));
            return env;
        }, comm -> grow(comm, comm.rank() % 2 == 0));
        for (Object r : results) {
            if (r instanceof Throwable t) {
                throw new AssertionError(t);
            }
            assertEquals(size * (size + 1) / 2, ((long[]) r)[0]);
        }
    }

    @ParameterizedTest
    @ValueSource(ints = {2, 3, 4})
    void aNameThatGrowsAfterItWasCachedStillWorksWithRanksAsProcesses(int size) throws Exception {
        for (ProcessRanks.Exit e : ProcessRanks.run(size, Main.class, List.of(), Map.of(), 120)) {
            assertEquals(0, e.code(), "rank " + e.rank() + " failed:\n" + e.output());
            assertTrue(e.output().contains("grew fine"), e.output());
        }
    }

    /** One rank of the process test. */
    public static final class Main {
        public static void main(String[] args) {
            try (Communicator comm = Communicator.fromEnvironment()) {
                grow(comm);
                System.out.println("grew fine");
            }
        }
    }
}
