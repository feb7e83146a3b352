package io.kolo.engine;

import io.kolo.DataType;
import io.kolo.ReduceOp;
import io.kolo.collective.FlatCollectives;
import io.kolo.transport.LocalTransport;
import io.kolo.transport.Transport;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * An op every rank submitted, stuck in its data exchange because one rank stopped sending (a stopped process), is said
 * to be so to a caller whose wait ran out; it was said to wait for "some rank [that] has not submitted it yet".
 */
class WaitingForTest {
    private static final long FLOATS = 1 << 18;

    @Test
    void anOpStuckInItsExchangeIsNotSaidToWaitForASubmission() throws Exception {
        List<Transport> transports = LocalTransport.group(2, Duration.ofSeconds(20));
        EngineSettings settings = EngineSettings.fromEnvironment(Map.of());
        CountDownLatch asked = new CountDownLatch(1);
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try (Arena arena = Arena.ofShared()) {
            Future<String> rank0 = pool.submit(() -> run(transports.get(0), settings, arena, asked));
            // Rank 1 stops sending the op's data (its small negotiation messages still go) until rank 0 has asked.
            Future<String> rank1 = pool.submit(() -> run(new Stalling(transports.get(1), asked), settings, arena, null));
            String said = rank0.get(60, TimeUnit.SECONDS);
            rank1.get(60, TimeUnit.SECONDS);
            assertNotNull(said, "rank 0 had no explanation for the wait");
            assertTrue(said.startsWith("every rank submitted it and its data is being exchanged, but some rank has"
                    + " stopped sending"), said);
        } finally {
            pool.shutdownNow();
            transports.forEach(Transport::close);
        }
    }

    /** Rank 0 (given {@code asked}) returns what its engine says the op waits for while rank 1 holds its data back. */
    private static String run(Transport transport, EngineSettings settings, Arena arena, CountDownLatch asked)
            throws Exception {
        try (FlatCollectives ops = new FlatCollectives(transport); Engine engine = new Engine(ops, settings, f -> f)) {
            CountDownLatch done = new CountDownLatch(1);
            Op op = Op.of(OpKind.ALLREDUCE, "grad", DataType.FLOAT32, new long[]{FLOATS}, arena.allocate(4 * FLOATS))
                    .reduce(ReduceOp.SUM, 1.0, 1.0)
                    .listener(new Op.Listener() {
                        @Override
                        public void completed(Op o) {
                            done.countDown();
                        }

                        @Override
                        public void failed(Op o, RuntimeException error) {
                            done.countDown();
                        }
                    });
            engine.submit(op);
            String said = null;
            if (asked != null) {
                Thread.sleep(500);   // rank 0's engine thread now waits in the exchange for rank 1's data
                said = engine.waitingFor(0, "grad");
                asked.countDown();
            }
            assertTrue(done.await(30, TimeUnit.SECONDS), "the op did not end");
            engine.shutdown();
            return said;
        }
    }

    /** Holds back every message of 64 KiB and more until {@code release}; smaller ones (the cycle's vote) go. */
    private record Stalling(Transport t, CountDownLatch release) implements Transport {
        private void hold(long length) {
            if (length >= 1 << 16) {
                try {
                    release.await(20, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }

        @Override
        public int rank() {
            return t.rank();
        }

        @Override
        public int size() {
            return t.size();
        }

        @Override
        public void send(int peer, MemorySegment src, long offset, long length) {
            hold(length);
            t.send(peer, src, offset, length);
        }

        @Override
        public void recv(int peer, MemorySegment dst, long offset, long length) {
            t.recv(peer, dst, offset, length);
        }

        @Override
        public void sendRecv(int sendPeer, MemorySegment src, long srcOffset, long srcLength, int recvPeer,
                             MemorySegment dst, long dstOffset, long dstLength) {
            hold(srcLength);
            t.sendRecv(sendPeer, src, srcOffset, srcLength, recvPeer, dst, dstOffset, dstLength);
        }

        @Override
        public void abort(RuntimeException cause) {
            t.abort(cause);
        }

        @Override
        public void close() {
            t.close();
        }
    }
}
