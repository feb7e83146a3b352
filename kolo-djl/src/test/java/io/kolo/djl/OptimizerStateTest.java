package io.kolo.djl;

import io.kolo.Communicator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * {@link OptimizerState#broadcast} over a real two-rank job in one process: a rank with no state (a worker that has
 * just joined) receives rank 0's update counts and every array.
 */
@Timeout(60)
class OptimizerStateTest {
    @Test
    void aRankWithNoStateReceivesRankZerosCountsAndArrays() throws Exception {
        OptimizerState committed = new OptimizerState("Adam", 7,
                Map.of("01Linear_weight", 7, "01Linear_bias", 6),
                Map.of("01Linear_weight", new byte[][]{bytes(40, 1), bytes(40, 2)},
                        "01Linear_bias", new byte[][]{bytes(8, 3), bytes(8, 4)}));
        List<Communicator> comms = Communicator.local(2);
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            List<Future<OptimizerState>> results = new ArrayList<>();
            for (Communicator comm : comms) {
                OptimizerState mine = comm.rank() == 0 ? committed : OptimizerState.NONE;
                results.add(pool.submit(() -> OptimizerState.broadcast(comm, mine, 0, "test.optimizer.")));
            }
            for (Future<OptimizerState> f : results) {
                OptimizerState got = f.get();
                assertEquals("Adam", got.kind());
                assertEquals(7, got.numUpdate());
                assertEquals(committed.counts(), got.counts());
                assertEquals(committed.slots().keySet(), got.slots().keySet());
                committed.slots().forEach((name, arrays) -> {
                    for (int k = 0; k < arrays.length; k++) {
                        assertArrayEquals(arrays[k], got.slots().get(name)[k], name + " slot " + k);
                    }
                });
            }
        } finally {
            pool.shutdownNow();
            comms.forEach(Communicator::close);
        }
    }

    private static byte[] bytes(int n, int seed) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) {
            b[i] = (byte) (seed * 31 + i);
        }
        return b;
    }
}
