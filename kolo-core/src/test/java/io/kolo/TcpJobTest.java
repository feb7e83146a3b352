package io.kolo;

import io.kolo.launch.JobSecret;
import org.junit.jupiter.api.Test;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Whole jobs over real TCP sockets on loopback without a launcher: each rank (a thread here) is built from its
 * own KOLO_* environment, and rank 0 serves the rendezvous store itself.
 */
class TcpJobTest {


    private static Map<String, String> env(int rank, int size, int port, String secret) {
        Map<String, String> env = new HashMap<>();
        env.put("KOLO_RANK", Integer.toString(rank));
        env.put("KOLO_SIZE", Integer.toString(size));
        env.put("KOLO_RENDEZVOUS_ADDR", "127.0.0.1");
        env.put("KOLO_RENDEZVOUS_PORT", Integer.toString(port));
        env.put("KOLO_SECRET", secret);
        env.put("KOLO_START_TIMEOUT_SECONDS", "4");
        return env;
    }


    @Test
    void ranksFindEachOtherThroughRankZeroAndReduceOverTcp() throws Exception {
        int port = Ranks.freePort();
        String secret = JobSecret.generate().toHex();
        List<Object> results = Ranks.fromEnvironment(3, r -> env(r, 3, port, secret), comm -> {
            double[] x = new double[300_000]; // large enough for the ring
            java.util.Arrays.fill(x, comm.rank() + 1);
            comm.allreduce(x, ReduceOp.SUM);
            long[] small = {comm.rank()};
            comm.allreduce(small, ReduceOp.MAX);
            return new double[]{x[0], x[x.length - 1], small[0], comm.size()};
        });
        for (Object r : results) {
            if (r instanceof Throwable t) {
                throw new AssertionError(t);
            }
            assertArrayEquals(new double[]{6, 6, 2, 3}, (double[]) r);
        }
    }

    @Test
    void aRankWithTheWrongSecretIsRejectedAndEveryRankSaysWhy() throws Exception {
        int port = Ranks.freePort();
        String secret = JobSecret.generate().toHex();
        String wrong = JobSecret.generate().toHex();
        List<Object> results = Ranks.fromEnvironment(3, r -> env(r, 3, port, r == 2 ? wrong : secret), comm -> "joined");
        for (int r = 0; r < 3; r++) {
            Object o = results.get(r);
            assertNotNull(o);
            Throwable t = assertInstanceOf(Throwable.class, o, "rank " + r + " should not have joined: " + o);
            String message = t.getMessage();
            if (r == 2) {
                assertTrue(message.contains("did not accept") || message.contains("secret"), message);
            } else {
                assertTrue(message.contains("2") && message.contains("KOLO_START_TIMEOUT_SECONDS"), message);
            }
        }
    }

    @Test
    void aMissingSecretIsExplained() {
        Map<String, String> env = env(0, 2, 1, "x");
        env.remove("KOLO_SECRET");
        // A setting the rank lacks: Kolo.init() prints it as one line and exits 2, as for a malformed one.
        BadSettingException e = org.junit.jupiter.api.Assertions.assertThrows(BadSettingException.class,
                () -> Communicator.fromEnvironment(env));
        assertTrue(e.getMessage().contains("KOLO_SECRET"), e.getMessage());
        assertEquals(1, e.getMessage().lines().count(), e.getMessage());
    }
}
