package io.kolo.elastic;

import io.kolo.Kolo;
import io.kolo.ReduceOp;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * In an elastic job (the launcher set {@code KOLO_ELASTIC_WORKER}) the facade's collectives run inside
 * {@link Elastic#run} only; a job of one rank in this JVM, joined with {@code Kolo.init(env)}. The launcher's
 * {@code ElasticRunTest} checks the same with worker processes.
 */
class OutsideElasticRunTest {
    private static final String FIX = "call collectives inside Elastic.run(state, body) in an elastic job";

    @AfterEach
    void leave() {
        Kolo.shutdown();
    }

    @Test
    void aCollectiveBeforeOrAfterElasticRunFailsAtOnceNamingTheFix() {
        Kolo.init(Map.of("KOLO_ELASTIC_WORKER", "w0"));
        IllegalStateException before = assertThrows(IllegalStateException.class,
                () -> Kolo.allreduce(new float[]{1}, ReduceOp.SUM));
        assertEquals(1, before.getMessage().lines().count(), before.getMessage());
        assertEquals(true, before.getMessage().endsWith(FIX), before.getMessage());
        ObjectState state = new ObjectState(Map.of("step", 0L));
        long[] sum = Elastic.run(state, s -> {
            s.commit();
            return Kolo.allreduce(new long[]{5}, ReduceOp.SUM);
        });
        assertArrayEquals(new long[]{5}, sum);
        // What is not a collective still answers after the run, e.g. for the program's last report.
        assertEquals(0, Kolo.rank());
        assertEquals(1, Kolo.size());
        for (Runnable collective : new Runnable[]{Kolo::barrier, () -> Kolo.broadcastObject("x", 0),
                () -> Kolo.allgather(new float[]{1}), () -> Kolo.broadcast(new float[]{1}, 0)}) {
            IllegalStateException after = assertThrows(IllegalStateException.class, collective::run);
            assertEquals(true, after.getMessage().endsWith(FIX), after.getMessage());
        }
    }

    @Test
    void anotherThreadMayCallCollectivesWhileElasticRunRuns() throws Exception {
        Kolo.init(Map.of("KOLO_ELASTIC_WORKER", "w0"));
        float[] got = Elastic.run(new ObjectState(Map.of()), s -> CompletableFuture
                .supplyAsync(() -> Kolo.allreduce(new float[]{2}, ReduceOp.SUM)).get(30, TimeUnit.SECONDS));
        assertArrayEquals(new float[]{2}, got);
    }

    @Test
    void outsideAnElasticJobCollectivesRunAnywhere() {
        Kolo.init(Map.of());
        assertArrayEquals(new float[]{3}, Kolo.allreduce(new float[]{3}, ReduceOp.SUM));
        Elastic.run(new ObjectState(Map.of()), s -> null);
        Kolo.barrier();
    }
}
