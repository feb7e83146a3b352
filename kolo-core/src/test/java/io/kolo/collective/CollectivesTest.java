package io.kolo.collective;

import io.kolo.DataType;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

/** Every collective except allreduce (see {@link AllreduceTest}), on 1 to 8 ranks over the local transport. */
class CollectivesTest {

    static Stream<Integer> sizes() {
        return Arrays.stream(AllreduceTest.SIZES).boxed();
    }

    static byte pattern(int rank, long i) {
        return (byte) (rank * 37 + i * 11 + 5);
    }

    /** Block sizes with empty blocks, uneven blocks, and a block larger than the ring chunk. */
    static long[] blockSizes(int n, int variant) {
        long[] sizes = new long[n];
        SplittableRandom r = new SplittableRandom(variant * 101L + n);
        for (int i = 0; i < n; i++) {
            sizes[i] = switch (variant) {
                case 0 -> 0;
                case 1 -> i % 2 == 0 ? 0 : r.nextInt(1, 200);
                case 2 -> r.nextInt(0, 3);
                default -> r.nextInt(0, 5000);
            };
        }
        return sizes;
    }

    @ParameterizedTest(name = "n={0}")
    @MethodSource("sizes")
    void allgathervConcatenatesBlocksInRankOrder(int n) {
        Ranks.run(n, 1024, 100, 100, c -> {
            try (Arena arena = Arena.ofShared()) {
                for (int variant = 0; variant < 4; variant++) {
                    long[] blocks = blockSizes(n, variant);
                    long total = Arrays.stream(blocks).sum();
                    MemorySegment buf = arena.allocate(total + 1);
                    buf.fill((byte) -1);
                    long offset = 0;
                    for (int b = 0; b < c.rank(); b++) {
                        offset += blocks[b];
                    }
                    for (long i = 0; i < blocks[c.rank()]; i++) {
                        buf.set(ValueLayout.JAVA_BYTE, offset + i, pattern(c.rank(), i));
                    }
                    c.allgatherv(buf, blocks);
                    long at = 0;
                    for (int b = 0; b < n; b++) {
                        for (long i = 0; i < blocks[b]; i++) {
                            assertEquals(pattern(b, i), buf.get(ValueLayout.JAVA_BYTE, at + i),
                                    "variant " + variant + " block " + b + " byte " + i);
                        }
                        at += blocks[b];
                    }
                    assertEquals((byte) -1, buf.get(ValueLayout.JAVA_BYTE, total), "wrote past the blocks");
                }
            }
            return null;
        });
    }

    static Stream<Arguments> broadcastCases() {
        List<Arguments> out = new ArrayList<>();
        for (int n : AllreduceTest.SIZES) {
            for (long threshold : new long[] {0, Long.MAX_VALUE}) {
                out.add(Arguments.of(n, threshold));
            }
        }
        return out.stream();
    }

    /** Threshold 0 forces the chunked chain, MAX the binomial tree; every rank takes a turn as root. */
    @ParameterizedTest(name = "n={0} threshold={1}")
    @MethodSource("broadcastCases")
    void broadcastCopiesRootBytesToEveryRank(int n, long threshold) {
        long[] lengths = {0, 1, 7, 1000, 25_001};
        Ranks.run(n, threshold, 1000, 1000, c -> {
            try (Arena arena = Arena.ofShared()) {
                for (int root = 0; root < n; root++) {
                    for (long bytes : lengths) {
                        MemorySegment buf = arena.allocate(bytes + 1);
                        for (long i = 0; i <= bytes; i++) {
                            buf.set(ValueLayout.JAVA_BYTE, i, c.rank() == root ? pattern(root, i) : (byte) 0x55);
                        }
                        c.broadcast(buf, bytes, root);
                        for (long i = 0; i < bytes; i++) {
                            assertEquals(pattern(root, i), buf.get(ValueLayout.JAVA_BYTE, i),
                                    "root " + root + " bytes " + bytes + " at " + i);
                        }
                        byte after = c.rank() == root ? pattern(root, bytes) : (byte) 0x55;
                        assertEquals(after, buf.get(ValueLayout.JAVA_BYTE, bytes), "wrote past the message");
                    }
                }
            }
            return null;
        });
    }

    @ParameterizedTest(name = "n={0}")
    @MethodSource("sizes")
    void broadcastOfSeveralMiBUsesDefaults(int n) {
        long bytes = (2L << 20) + 3;
        Ranks.run(n, c -> {
            try (Arena arena = Arena.ofShared()) {
                MemorySegment buf = arena.allocate(bytes);
                int root = n - 1;
                if (c.rank() == root) {
                    for (long i = 0; i < bytes; i++) {
                        buf.set(ValueLayout.JAVA_BYTE, i, pattern(root, i));
                    }
                }
                c.broadcast(buf, bytes, root);
                for (long i = 0; i < bytes; i++) {
                    if (pattern(root, i) != buf.get(ValueLayout.JAVA_BYTE, i)) {
                        assertEquals(pattern(root, i), buf.get(ValueLayout.JAVA_BYTE, i), "byte " + i);
                    }
                }
            }
            return null;
        });
    }

    /** bytes[p][q] is what rank p sends to rank q. */
    static long[][] exchangeMatrix(int n, int variant) {
        SplittableRandom r = new SplittableRandom(variant + 17L * n);
        long[][] m = new long[n][n];
        for (int p = 0; p < n; p++) {
            for (int q = 0; q < n; q++) {
                m[p][q] = variant == 0 ? 0 : (r.nextInt(4) == 0 ? 0 : r.nextInt(1, variant == 1 ? 9 : 3000));
            }
        }
        return m;
    }

    static byte exchangeByte(int from, int to, long i) {
        return (byte) (from * 13 + to * 7 + i);
    }

    @ParameterizedTest(name = "n={0}")
    @MethodSource("sizes")
    void alltoallvDeliversEveryPersonalisedBlock(int n) {
        Ranks.run(n, c -> {
            int me = c.rank();
            try (Arena arena = Arena.ofShared()) {
                for (int variant = 0; variant < 3; variant++) {
                    long[][] m = exchangeMatrix(n, variant);
                    long[] sendBytes = m[me].clone();
                    long[] recvBytes = new long[n];
                    for (int p = 0; p < n; p++) {
                        recvBytes[p] = m[p][me];
                    }
                    MemorySegment send = arena.allocate(Math.max(1, Arrays.stream(sendBytes).sum()));
                    MemorySegment recv = arena.allocate(Arrays.stream(recvBytes).sum() + 1);
                    recv.fill((byte) -1);
                    long at = 0;
                    for (int q = 0; q < n; q++) {
                        for (long i = 0; i < sendBytes[q]; i++) {
                            send.set(ValueLayout.JAVA_BYTE, at + i, exchangeByte(me, q, i));
                        }
                        at += sendBytes[q];
                    }
                    c.alltoallv(send, sendBytes, recv, recvBytes);
                    at = 0;
                    for (int p = 0; p < n; p++) {
                        for (long i = 0; i < recvBytes[p]; i++) {
                            assertEquals(exchangeByte(p, me, i), recv.get(ValueLayout.JAVA_BYTE, at + i),
                                    "variant " + variant + " from " + p + " byte " + i);
                        }
                        at += recvBytes[p];
                    }
                    assertEquals((byte) -1, recv.get(ValueLayout.JAVA_BYTE, at), "wrote past the blocks");
                }
            }
            return null;
        });
    }

    static Stream<Arguments> reducescatterCases() {
        List<Arguments> out = new ArrayList<>();
        for (int n : AllreduceTest.SIZES) {
            for (DataType t : DataType.values()) {
                out.add(Arguments.of(n, t));
            }
        }
        return out.stream();
    }

    @ParameterizedTest(name = "n={0} {1}")
    @MethodSource("reducescatterCases")
    void reducescatterLeavesEachRankItsReducedBlock(int n, DataType type) {
        List<Reduction> ops = AllreduceTest.reductions(type);
        Ranks.run(n, 0, 24, 24, c -> {
            int me = c.rank();
            try (Arena arena = Arena.ofShared()) {
                for (int o = 0; o < ops.size(); o++) {
                    Reduction op = ops.get(o);
                    for (int variant = 0; variant < 4; variant++) {
                        long[] blocks = blockSizes(n, variant);
                        for (int b = 0; b < n; b++) {
                            blocks[b] = Math.min(blocks[b], 300);
                        }
                        long total = Arrays.stream(blocks).sum();
                        long seed = 7L * o + variant;
                        MemorySegment buf = Elements.allocate(arena, total, type);
                        AllreduceTest.fill(buf, type, op, seed, me, total);
                        c.reducescatter(buf, blocks, type, op);
                        long start = 0;
                        for (int b = 0; b < me; b++) {
                            start += blocks[b];
                        }
                        for (long i = start; i < start + blocks[me]; i++) {
                            assertEquals(Elements.expected(type, op, seed, n, i), Elements.get(buf, type, i),
                                    op + " variant " + variant + " element " + i);
                        }
                    }
                }
            }
            return null;
        });
    }

    @ParameterizedTest(name = "n={0}")
    @MethodSource("sizes")
    void allreducePairReducesBothRunsIndependentlyInOneRound(int n) {
        Ranks.run(n, c -> {
            int me = c.rank();
            try (Arena arena = Arena.ofShared()) {
                for (DataType type : DataType.values()) {
                    for (Reduction op : AllreduceTest.reductions(type)) {
                        // The engine's shape: int64 flags under BAND, then a payload of any type right after them.
                        long countA = 5;
                        long countB = 37;
                        long seedA = 3;
                        long seedB = 11L * op.ordinal() + type.ordinal();
                        MemorySegment buf = arena.allocate(countA * 8 + countB * type.byteSize(), 8);
                        MemorySegment a = buf.asSlice(0, countA * 8);
                        MemorySegment b = buf.asSlice(countA * 8);
                        AllreduceTest.fill(a, DataType.INT64, Reduction.BAND, seedA, me, countA);
                        AllreduceTest.fill(b, type, op, seedB, me, countB);
                        c.allreducePair(buf, countA, DataType.INT64, Reduction.BAND, countB, type, op);
                        for (long i = 0; i < countA; i++) {
                            assertEquals(Elements.expected(DataType.INT64, Reduction.BAND, seedA, n, i),
                                    Elements.get(a, DataType.INT64, i), "BAND element " + i);
                        }
                        for (long i = 0; i < countB; i++) {
                            assertEquals(Elements.expected(type, op, seedB, n, i), Elements.get(b, type, i),
                                    type + " " + op + " element " + i);
                        }
                    }
                }
                MemorySegment odd = arena.allocate(3 + 8, 8);
                IllegalArgumentException e = org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
                        () -> c.allreducePair(odd, 3, DataType.UINT8, Reduction.SUM, 1, DataType.INT64, Reduction.SUM));
                org.junit.jupiter.api.Assertions.assertTrue(e.getMessage().contains("not a multiple"), e.getMessage());
            }
            return null;
        });
    }

    @ParameterizedTest(name = "n={0}")
    @MethodSource("sizes")
    void barrierReleasesNobodyBeforeEveryoneArrived(int n) {
        AtomicInteger arrived = new AtomicInteger();
        Ranks.run(n, c -> {
            for (int round = 1; round <= 3; round++) {
                // Stagger arrivals so that an early release would be observable.
                Thread.sleep(5L * ((c.rank() + round) % n));
                arrived.incrementAndGet();
                c.barrier();
                assertEquals(true, arrived.get() >= round * n, "released before all arrived in round " + round);
                c.barrier();
            }
            return null;
        });
        assertEquals(3 * n, arrived.get());
    }

    @ParameterizedTest(name = "n={0}")
    @MethodSource("sizes")
    void controlPlaneGatherAndBroadcast(int n) {
        Ranks.run(n, c -> {
            int me = c.rank();
            for (int root = 0; root < n; root++) {
                byte[] mine = new byte[(me * 3 + root) % 5 == 0 ? 0 : me * 100 + root + 1];
                Arrays.fill(mine, (byte) (me + 1));
                byte[][] all = c.gather(mine, root);
                if (me == root) {
                    assertEquals(n, all.length);
                    for (int p = 0; p < n; p++) {
                        byte[] expected = new byte[(p * 3 + root) % 5 == 0 ? 0 : p * 100 + root + 1];
                        Arrays.fill(expected, (byte) (p + 1));
                        assertArrayEquals(expected, all[p], "from rank " + p);
                    }
                } else {
                    assertNull(all);
                }
                byte[] data = me == root ? ("hello from " + root).repeat(root * 500).getBytes() : null;
                byte[] got = c.broadcast(data, root);
                assertArrayEquals(("hello from " + root).repeat(root * 500).getBytes(), got);
            }
            return null;
        });
    }

    @ParameterizedTest
    @ValueSource(ints = {3, 4})
    void collectivesCanBeInterleavedWithoutCrosstalk(int n) {
        Ranks.run(n, 0, 64, 64, c -> {
            try (Arena arena = Arena.ofShared()) {
                MemorySegment ints = arena.allocate(4L * 100);
                for (int iter = 0; iter < 20; iter++) {
                    for (int i = 0; i < 100; i++) {
                        ints.setAtIndex(ValueLayout.JAVA_INT, i, c.rank() + iter + i);
                    }
                    c.allreduce(ints, 100, DataType.INT32, Reduction.MAX);
                    assertEquals(n - 1 + iter + 99, ints.getAtIndex(ValueLayout.JAVA_INT, 99));
                    c.barrier();
                    byte[] b = c.broadcast(new byte[] {(byte) iter}, iter % n);
                    assertEquals(iter, b[0]);
                }
            }
            return null;
        });
    }
}
