package io.kolo;

import io.kolo.launch.JobSecret;
import org.junit.jupiter.api.Test;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Jobs over real TCP sockets on loopback whose ranks are told (by KOLO_LOCAL_SIZE) that they run two to a host:
 * the topology exchange at start and the hierarchical collectives over real connections.
 */
class HierarchicalTcpJobTest {


    private static Map<String, String> env(int rank, int size, int localSize, int port, String secret) {
        Map<String, String> env = new HashMap<>();
        env.put("KOLO_RANK", Integer.toString(rank));
        env.put("KOLO_SIZE", Integer.toString(size));
        env.put("KOLO_LOCAL_SIZE", Integer.toString(localSize));
        env.put("KOLO_RENDEZVOUS_ADDR", "127.0.0.1");
        env.put("KOLO_RENDEZVOUS_PORT", Integer.toString(port));
        env.put("KOLO_SECRET", secret);
        env.put("KOLO_START_TIMEOUT_SECONDS", "10");
        return env;
    }


    private static Ranks.Body<Object> sums(int len) {
        return comm -> {
            long[] x = new long[len];
            for (int i = 0; i < len; i++) {
                x[i] = (long) comm.rank() * len + i;
            }
            comm.allreduce(x, ReduceOp.SUM);
            float[] f = new float[len];
            java.util.SplittableRandom rnd = new java.util.SplittableRandom(comm.rank());
            for (int i = 0; i < len; i++) {
                f[i] = (float) rnd.nextGaussian();
            }
            comm.allreduce(f, ReduceOp.SUM);
            long[] fbits = new long[len];
            for (int i = 0; i < len; i++) {
                fbits[i] = Float.floatToRawIntBits(f[i]);
            }
            long[] both = new long[2 * len];
            System.arraycopy(x, 0, both, 0, len);
            System.arraycopy(fbits, 0, both, len, len);
            return both;
        };
    }

    private static void checkSums(List<Object> results, int size, int len) {
        for (Object r : results) {
            if (r instanceof Throwable t) {
                throw new AssertionError(t);
            }
        }
        long[] first = (long[]) results.getFirst();
        for (int i = 0; i < len; i++) {
            long expected = (long) len * size * (size - 1) / 2 + (long) size * i;
            if (first[i] != expected) {
                assertEquals(expected, first[i], "element " + i);
            }
        }
        for (Object r : results) {
            assertArrayEquals(first, (long[]) r, "ranks differ");
        }
    }

    /** 2 hosts x 2 ranks; 200 000 elements are well above the threshold, so the hierarchical path runs. */
    @Test
    void twoHostsOfTwoReduceHierarchicallyOverTcp() throws Exception {
        int port = Ranks.freePort();
        String secret = JobSecret.generate().toHex();
        int len = 200_003;
        checkSums(Ranks.fromEnvironment(4, r -> env(r, 4, 2, port, secret), sums(len)), 4, len);
    }

    /** 3 ranks at 2 per host cannot be split evenly: the job falls back to flat and still reduces correctly. */
    @Test
    void unevenHostsFallBackToFlat() throws Exception {
        int port = Ranks.freePort();
        String secret = JobSecret.generate().toHex();
        int len = 100_001;
        checkSums(Ranks.fromEnvironment(3, r -> env(r, 3, 2, port, secret), sums(len)), 3, len);
    }

    @Test
    void ranksWithDifferentHierarchicalSettingsFailAtStartOnEveryRank() throws Exception {
        int port = Ranks.freePort();
        String secret = JobSecret.generate().toHex();
        List<Object> results = Ranks.fromEnvironment(4, r -> {
            Map<String, String> env = env(r, 4, 2, port, secret);
            if (r == 2) {
                env.put("KOLO_HIERARCHICAL_ALLREDUCE", "0");
            }
            return env;
        }, comm -> "joined");
        for (int r = 0; r < 4; r++) {
            Throwable t = assertInstanceOf(Throwable.class, results.get(r), "rank " + r + " should not have joined");
            assertTrue(t.getMessage().contains("rank 2 runs with") && t.getMessage().contains("KOLO_HIERARCHICAL_ALLREDUCE"),
                    "rank " + r + ": " + t.getMessage());
        }
    }
}
