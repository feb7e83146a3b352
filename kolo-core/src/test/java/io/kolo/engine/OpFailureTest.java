package io.kolo.engine;

import io.kolo.DataType;
import io.kolo.ReduceOp;
import io.kolo.collective.FlatCollectives;
import io.kolo.transport.LocalTransport;
import io.kolo.transport.Transport;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A failure that belongs to one op on one rank fails that op there, and the communicator goes on working. */
class OpFailureTest {

    @Test
    void aResultThatCannotBeHeldFailsOnlyItsOpAndTheNextOpsRun() throws Exception {
        List<Transport> transports = LocalTransport.group(2, Duration.ofSeconds(20));
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try (Arena arena = Arena.ofShared()) {
            Future<String> r0 = pool.submit(() -> run(transports.get(0), arena));
            Future<String> r1 = pool.submit(() -> run(transports.get(1), arena));
            String first = r0.get(60, TimeUnit.SECONDS);
            assertTrue(first.startsWith("failed: ") && first.contains("allgather 'rows'") && first.contains("rank 0")
                    && first.contains("no room for the result"), first);
            assertEquals("gathered 8 elements", r1.get(60, TimeUnit.SECONDS));
        } finally {
            pool.shutdownNow();
            transports.forEach(Transport::close);
        }
    }

    /** Rank 0's allgather cannot allocate its result; then both ranks allreduce, which must still work. */
    private static String run(Transport transport, Arena arena) throws Exception {
        try (FlatCollectives ops = new FlatCollectives(transport);
             Engine engine = new Engine(ops, EngineSettings.defaults(), f -> f)) {
            int rank = ops.rank();
            MemorySegment rows = arena.allocate(16, 8);
            CompletableFuture<Op> gathered = new CompletableFuture<>();
            Op gather = Op.of(OpKind.ALLGATHER, "rows", DataType.INT32, new long[]{4}, rows)
                    .outputs(shape -> {
                        if (rank == 0) {
                            throw new IllegalStateException("no room for the result");
                        }
                        return arena.allocate(4L * shape[0], 8);
                    })
                    .listener(listener(gathered));
            engine.submit(gather);
            String outcome;
            try {
                Op done = gathered.get(30, TimeUnit.SECONDS);
                outcome = "gathered " + done.resultShape()[0] + " elements";
            } catch (java.util.concurrent.ExecutionException e) {
                outcome = "failed: " + e.getCause().getMessage();
            }
            MemorySegment x = arena.allocate(4, 4);
            x.set(ValueLayout.JAVA_INT, 0, rank + 1);
            CompletableFuture<Op> reduced = new CompletableFuture<>();
            engine.submit(Op.of(OpKind.ALLREDUCE, "after", DataType.INT32, new long[]{1}, x)
                    .reduce(ReduceOp.SUM, 1.0, 1.0).listener(listener(reduced)));
            reduced.get(30, TimeUnit.SECONDS);
            assertEquals(3, x.get(ValueLayout.JAVA_INT, 0), "the op after the failed one");
            return outcome;
        }
    }

    private static Op.Listener listener(CompletableFuture<Op> f) {
        return new Op.Listener() {
            @Override
            public void completed(Op op) {
                f.complete(op);
            }

            @Override
            public void failed(Op op, RuntimeException error) {
                f.completeExceptionally(error);
            }
        };
    }
}
