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
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A caller waiting for its op runs the engine's cycles itself, so a blocking op needs no thread hand-off. */
class EngineDriveTest {
    private static final int OPS = 50;
    private static final EngineSettings SETTINGS = EngineSettings.fromEnvironment(Map.of("KOLO_CYCLE_TIME", "50"));

    @Test
    void aWaitingCallerRunsTheCyclesThatCompleteItsOp() throws Exception {
        List<Transport> transports = LocalTransport.group(2, Duration.ofSeconds(20));
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            List<Future<Integer>> onCaller = new ArrayList<>();
            for (int r = 0; r < 2; r++) {
                Transport t = transports.get(r);
                onCaller.add(pool.submit(() -> runOps(t)));
            }
            for (int r = 0; r < 2; r++) {
                int n = onCaller.get(r).get(60, TimeUnit.SECONDS);
                // The first op may be taken up by the engine thread that its submission woke. After that the engine
                // thread stays out of the way for a cycle time after each drive: a long one here, so that a caller
                // descheduled between two ops on a crowded machine does not hand its next op to that thread.
                assertTrue(n >= OPS - 2, "rank " + r + ": only " + n + " of " + OPS + " ops completed on the caller");
            }
        } finally {
            pool.shutdownNow();
            transports.forEach(Transport::close);
        }
    }

    /** Submits OPS allreduces one at a time, driving each; returns how many completed on this thread. */
    private static int runOps(Transport transport) {
        try (FlatCollectives ops = new FlatCollectives(transport); Engine engine = new Engine(ops, SETTINGS, f -> f);
             Arena arena = Arena.ofShared()) {
            MemorySegment data = arena.allocate(4L * 16, 8);
            int rank = ops.rank();
            int onCaller = 0;
            for (int i = 0; i < OPS; i++) {
                for (int e = 0; e < 16; e++) {
                    data.setAtIndex(ValueLayout.JAVA_FLOAT, e, rank + i);
                }
                AtomicReference<Thread> ranOn = new AtomicReference<>();
                AtomicReference<RuntimeException> failed = new AtomicReference<>();
                Op op = Op.of(OpKind.ALLREDUCE, "x", DataType.FLOAT32, new long[]{16}, data)
                        .reduce(ReduceOp.SUM, 1.0, 1.0)
                        .listener(new Op.Listener() {
                            @Override
                            public void completed(Op o) {
                                ranOn.set(Thread.currentThread());
                            }

                            @Override
                            public void failed(Op o, RuntimeException error) {
                                failed.set(error);
                                ranOn.set(Thread.currentThread());
                            }
                        });
                engine.submit(op);
                long now = System.nanoTime();
                engine.drive(() -> ranOn.get() != null, now, now + TimeUnit.SECONDS.toNanos(20));
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
                while (ranOn.get() == null && System.nanoTime() < deadline) {
                    Thread.onSpinWait();
                }
                if (failed.get() != null) {
                    throw failed.get();
                }
                assertEquals(1 + 2f * i, data.getAtIndex(ValueLayout.JAVA_FLOAT, 15), "sum of op " + i);
                if (ranOn.get() == Thread.currentThread()) {
                    onCaller++;
                }
            }
            engine.shutdown();
            return onCaller;
        }
    }
}
