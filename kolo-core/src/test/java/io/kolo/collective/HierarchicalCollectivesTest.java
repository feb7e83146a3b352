package io.kolo.collective;

import io.kolo.DataType;
import io.kolo.KoloException;
import io.kolo.Topology;
import io.kolo.bootstrap.Placement;
import io.kolo.transport.LocalTransport;
import io.kolo.transport.Transport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.SplittableRandom;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class HierarchicalCollectivesTest {

    /** hosts x ranks per host. */
    static final int[][] SHAPES = {{2, 2}, {2, 3}, {3, 2}, {3, 3}, {2, 4}};

    static Stream<Arguments> everyTypeAndShape() {
        List<Arguments> out = new ArrayList<>();
        for (int[] s : SHAPES) {
            for (DataType t : DataType.values()) {
                out.add(Arguments.of(s[0], s[1], t));
            }
        }
        return out.stream();
    }

    /** Threshold 0 makes every allreduce of at least localSize elements hierarchical; 40-byte chunks pipeline. */
    static CollectiveOps hierarchical(Transport t, int hosts, int perHost, long smallMessageBytes) {
        return new HierarchicalCollectives(new FlatCollectives(t, smallMessageBytes, 40, 40), t, perHost, hosts, true,
                true);
    }

    @ParameterizedTest(name = "{0} hosts x {1} {2}")
    @MethodSource("everyTypeAndShape")
    void allreduceMatchesReference(int hosts, int perHost, DataType type) {
        int n = hosts * perHost;
        List<Reduction> ops = AllreduceTest.reductions(type);
        long[] counts = {0, 1, perHost, perHost + 1, 2L * n + 1, 1531};
        Ranks.runOps(n, t -> hierarchical(t, hosts, perHost, 0), c -> {
            try (Arena arena = Arena.ofShared()) {
                for (int o = 0; o < ops.size(); o++) {
                    for (int k = 0; k < counts.length; k++) {
                        long count = counts[k];
                        Reduction op = ops.get(o);
                        long seed = AllreduceTest.seed(o, k);
                        MemorySegment buf = Elements.allocate(arena, count + 3, type);
                        AllreduceTest.fill(buf, type, op, seed, c.rank(), count);
                        for (long i = count; i < count + 3; i++) {
                            Elements.put(buf, type, i, 99);
                        }
                        c.allreduce(buf, count, type, op);
                        for (int i = 0; i < count; i++) {
                            long expected = Elements.expected(type, op, seed, n, i);
                            if (expected != Elements.get(buf, type, i)) {
                                assertEquals(expected, Elements.get(buf, type, i),
                                        "rank " + c.rank() + " " + op + " count " + count + " element " + i);
                            }
                        }
                        for (long i = count; i < count + 3; i++) {
                            assertEquals(99, Elements.get(buf, type, i), "wrote past count");
                        }
                    }
                }
            }
            return null;
        });
    }

    static Stream<Arguments> scaledCases() {
        List<Arguments> out = new ArrayList<>();
        // One host and one rank per host too: the class takes them, though selection never builds them.
        List<int[]> shapes = new ArrayList<>(Arrays.asList(SHAPES));
        shapes.add(new int[] {1, 3});
        shapes.add(new int[] {3, 1});
        for (int[] s : shapes) {
            for (DataType t : List.of(DataType.FLOAT32, DataType.FLOAT64, DataType.BFLOAT16, DataType.INT32)) {
                out.add(Arguments.of(s[0], s[1], t));
            }
        }
        return out.stream();
    }

    /**
     * allreduceScaled gives every rank exactly the bytes of allreduce followed by scaling the whole buffer, though
     * only the cross-host allreduce scales (each rank its own block): every element is scaled once, none twice. Runs
     * with threshold 0 (always hierarchical, ring across hosts), 256 bytes (small counts flat, the middle ones
     * recursive doubling across hosts, large ones the ring) and with the hierarchical allreduce off.
     */
    @ParameterizedTest(name = "{0} hosts x {1} {2}")
    @MethodSource("scaledCases")
    void allreduceScaledEqualsAllreduceThenScale(int hosts, int perHost, DataType type) {
        int n = hosts * perHost;
        long[] counts = {0, 1, perHost + 1, 2L * n + 1, 100, 1531};
        for (int mode = 0; mode < 3; mode++) {
            long threshold = mode == 0 ? 0 : 256;
            boolean on = mode < 2;
            Ranks.runOps(n, t -> new HierarchicalCollectives(new FlatCollectives(t, threshold, 40, 40), t, perHost,
                    hosts, on, false), c -> {
                try (Arena arena = Arena.ofShared()) {
                    for (double factor : new double[] {1.0 / n, 0.1}) {
                        for (long count : counts) {
                            long seed = count * 7 + (long) (factor * 1000);
                            MemorySegment scaled = Elements.allocate(arena, count + 3, type);
                            MemorySegment plain = Elements.allocate(arena, count + 3, type);
                            for (MemorySegment buf : List.of(scaled, plain)) {
                                AllreduceTest.fill(buf, type, Reduction.SUM, seed, c.rank(), count);
                                for (long i = count; i < count + 3; i++) {
                                    Elements.put(buf, type, i, 99);
                                }
                            }
                            c.allreduceScaled(scaled, count, type, Reduction.SUM, factor);
                            c.allreduce(plain, count, type, Reduction.SUM);
                            Kernels.scale(plain, 0, count, type, factor);
                            assertArrayEquals(plain.toArray(ValueLayout.JAVA_BYTE),
                                    scaled.toArray(ValueLayout.JAVA_BYTE), c + " threshold " + threshold + " " + type
                                            + " x" + factor + " count " + count);
                        }
                    }
                }
                return null;
            });
        }
    }

    static Stream<Arguments> floatCases() {
        // 10007 floats are 40028 bytes: threshold 0 runs the ring across hosts, 20000 recursive doubling (each
        // host block is below it while the whole message is not).
        return Stream.of(Arguments.of(2, 2, 0L), Arguments.of(3, 2, 0L), Arguments.of(2, 3, 20_000L),
                Arguments.of(3, 3, 20_000L));
    }

    /**
     * Rounding differs from the flat algorithms, but every rank must hold the same bits and stay within float
     * tolerance of the exact sum. The cross-host phase runs with ring, recursive doubling or both (by threshold).
     */
    @ParameterizedTest(name = "{0} hosts x {1}, cross threshold {2}")
    @MethodSource("floatCases")
    void float32ResultsAreBitIdenticalAndAccurate(int hosts, int perHost, long crossThreshold) {
        int n = hosts * perHost;
        int count = 10_007;
        List<int[]> bits = Ranks.runOps(n, t -> new HierarchicalCollectives(
                new FlatCollectives(t, crossThreshold, 4096, 4096), t, perHost, hosts, true, false), c -> {
            try (Arena arena = Arena.ofShared()) {
                MemorySegment buf = arena.allocate(count * 4L);
                fillGaussian(buf, c.rank(), count);
                c.allreduce(buf, count, DataType.FLOAT32, Reduction.SUM);
                return buf.toArray(ValueLayout.JAVA_INT);
            }
        });
        double[] reference = new double[count];
        double[] magnitude = new double[count];
        for (int r = 0; r < n; r++) {
            SplittableRandom random = new SplittableRandom(1000 + r);
            for (int i = 0; i < count; i++) {
                float v = (float) (random.nextGaussian() * Math.exp(random.nextInt(-20, 20)));
                reference[i] += v;
                magnitude[i] += Math.abs(v);
            }
        }
        for (int r = 1; r < n; r++) {
            assertArrayEquals(bits.get(0), bits.get(r), "rank " + r + " differs from rank 0");
        }
        for (int i = 0; i < count; i++) {
            float got = Float.intBitsToFloat(bits.get(0)[i]);
            // Each of the n - 1 float additions rounds by at most half an ulp of a partial sum <= magnitude.
            assertEquals(reference[i], got, magnitude[i] * n * 0x1p-24 + 1e-30, "element " + i);
        }
    }

    private static void fillGaussian(MemorySegment buf, int rank, int count) {
        SplittableRandom random = new SplittableRandom(1000 + rank);
        for (int i = 0; i < count; i++) {
            buf.setAtIndex(ValueLayout.JAVA_FLOAT, i, (float) (random.nextGaussian() * Math.exp(random.nextInt(-20, 20))));
        }
    }

    static Stream<Arguments> shapes() {
        return Arrays.stream(SHAPES).map(s -> Arguments.of(s[0], s[1]));
    }

    /** Ragged, empty and all-empty blocks, with 100-byte chunks so that big blocks take several steps. */
    @ParameterizedTest(name = "{0} hosts x {1}")
    @MethodSource("shapes")
    void allgathervConcatenatesRaggedBlocksInRankOrder(int hosts, int perHost) {
        int n = hosts * perHost;
        Ranks.runOps(n, t -> new HierarchicalCollectives(new FlatCollectives(t, 1024, 100, 100), t, perHost, hosts,
                false, true), c -> {
            try (Arena arena = Arena.ofShared()) {
                for (int variant = 0; variant < 4; variant++) {
                    long[] blocks = CollectivesTest.blockSizes(n, variant);
                    long total = Arrays.stream(blocks).sum();
                    MemorySegment buf = arena.allocate(total + 1);
                    buf.fill((byte) -1);
                    long offset = 0;
                    for (int b = 0; b < c.rank(); b++) {
                        offset += blocks[b];
                    }
                    for (long i = 0; i < blocks[c.rank()]; i++) {
                        buf.set(ValueLayout.JAVA_BYTE, offset + i, CollectivesTest.pattern(c.rank(), i));
                    }
                    c.allgatherv(buf, blocks);
                    long at = 0;
                    for (int b = 0; b < n; b++) {
                        for (long i = 0; i < blocks[b]; i++) {
                            assertEquals(CollectivesTest.pattern(b, i), buf.get(ValueLayout.JAVA_BYTE, at + i),
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

    /** Collectives that stay flat still work through the hierarchical object (they delegate). */
    @Test
    void otherCollectivesDelegate() {
        Ranks.runOps(4, t -> hierarchical(t, 2, 2, 0), c -> {
            try (Arena arena = Arena.ofShared()) {
                MemorySegment buf = arena.allocate(8);
                buf.set(ValueLayout.JAVA_LONG, 0, c.rank() == 3 ? 77 : 0);
                c.broadcast(buf, 8, 3);
                assertEquals(77, buf.get(ValueLayout.JAVA_LONG, 0));
                c.barrier();
                byte[] root = c.broadcast(c.rank() == 1 ? new byte[] {5, 6} : null, 1);
                assertArrayEquals(new byte[] {5, 6}, root);
            }
            return null;
        });
    }

    @Test
    void badReductionIsRejectedBeforeAnyTransfer() {
        Ranks.runOps(4, t -> hierarchical(t, 2, 2, 0), c -> {
            try (Arena arena = Arena.ofShared()) {
                MemorySegment buf = arena.allocate(64);
                assertThrows(IllegalArgumentException.class, () -> c.allreduce(buf, 8, DataType.FLOAT32, Reduction.BAND));
                assertThrows(IllegalArgumentException.class, () -> c.allreduce(buf, 17, DataType.FLOAT32, Reduction.SUM));
            }
            return null;
        });
    }

    static List<Topology> packed(int hosts, int perHost) {
        List<Topology> out = new ArrayList<>();
        for (int r = 0; r < hosts * perHost; r++) {
            out.add(new Topology(r, hosts * perHost, r % perHost, perHost, r / perHost, hosts));
        }
        return out;
    }

    /** Ranks placed on the hosts named, rank by rank, as {@code kolo run} and embedders place them. */
    static Hosts on(String... names) {
        return Hosts.of(Placement.of(List.of(names)), List.of(names));
    }

    @Test
    void hierarchicalOnlyForHomogeneousPackedHosts() {
        assertTrue(Hierarchy.obstacle(Hosts.of(packed(2, 2))).isEmpty());
        assertTrue(Hierarchy.obstacle(Hosts.of(packed(3, 4))).isEmpty());
        assertTrue(Hierarchy.obstacle(on("a", "a", "b", "b")).isEmpty());
        assertTrue(Hierarchy.obstacle(Hosts.of(packed(1, 4))).orElseThrow().contains("several hosts"));
        assertTrue(Hierarchy.obstacle(Hosts.of(packed(4, 1))).orElseThrow().contains("several hosts"));
        // 3 ranks on host a, 1 on host b.
        Optional<String> ragged = Hierarchy.obstacle(on("a", "a", "a", "b"));
        assertTrue(ragged.orElseThrow().contains("different numbers"), ragged.get());
        // Round-robin placement: rank r on host r % 2.
        Optional<String> roundRobin = Hierarchy.obstacle(on("a", "b", "a", "b"));
        assertTrue(roundRobin.orElseThrow().contains("not packed"), roundRobin.get());
    }

    @Test
    void selectionFollowsTopologyAndSettings() {
        AlgorithmSettings auto = AlgorithmSettings.defaults();
        AlgorithmSettings off = new AlgorithmSettings(AlgorithmSettings.Mode.OFF, AlgorithmSettings.Mode.OFF);
        AlgorithmSettings on = new AlgorithmSettings(AlgorithmSettings.Mode.ON, AlgorithmSettings.Mode.ON);
        List<Transport> four = LocalTransport.group(4, Duration.ofSeconds(5));
        try (FlatCollectives flat = new FlatCollectives(four.get(2))) {
            assertSame(flat, Hierarchy.select(flat, four.get(2), Hosts.of(packed(2, 2)), off));
        }
        try (CollectiveOps ops = Hierarchy.select(new FlatCollectives(four.get(2)), four.get(2), Hosts.of(packed(2, 2)),
                auto)) {
            assertInstanceOf(HierarchicalCollectives.class, ops);
            assertTrue(ops.toString().contains("host 1 of 2, local 0 of 2, allreduce]"), ops.toString());
        }
        try (CollectiveOps ops = Hierarchy.select(new FlatCollectives(four.get(2)), four.get(2), Hosts.of(packed(2, 2)),
                on)) {
            assertTrue(ops.toString().contains("allreduce, allgather]"), ops.toString());
        }
        try (FlatCollectives flat = new FlatCollectives(four.get(2))) {
            assertSame(flat, Hierarchy.select(flat, four.get(2), Hosts.of(packed(1, 4)), on));
        }
        four.forEach(Transport::close);
    }

    @Test
    void defaultThresholdGrowsWithTheGroupSize() {
        assertEquals(64 << 10, FlatCollectives.defaultSmallMessageBytes(1));
        assertEquals(64 << 10, FlatCollectives.defaultSmallMessageBytes(2));
        assertEquals(256 << 10, FlatCollectives.defaultSmallMessageBytes(8));
        assertEquals(1 << 20, FlatCollectives.defaultSmallMessageBytes(1000));
        List<Transport> four = LocalTransport.group(4, Duration.ofSeconds(5));
        try (FlatCollectives auto = new FlatCollectives(four.getFirst());
             FlatCollectives fixed = new FlatCollectives(four.get(1), 7)) {
            assertEquals(128 << 10, auto.smallMessageBytes());
            assertEquals(7, fixed.smallMessageBytes());
        }
        assertEquals(FlatCollectives.AUTO, io.kolo.engine.EngineSettings.defaults().smallMessageBytes());
        four.forEach(Transport::close);
    }

    @Test
    void settingsAreReadFromTheEnvironment() {
        assertEquals(AlgorithmSettings.defaults(), AlgorithmSettings.fromEnvironment(java.util.Map.of()));
        assertEquals(new AlgorithmSettings(AlgorithmSettings.Mode.OFF, AlgorithmSettings.Mode.ON),
                AlgorithmSettings.fromEnvironment(java.util.Map.of("KOLO_HIERARCHICAL_ALLREDUCE", "0",
                        "KOLO_HIERARCHICAL_ALLGATHER", "1")));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> AlgorithmSettings.fromEnvironment(java.util.Map.of("KOLO_HIERARCHICAL_ALLREDUCE", "maybe")));
        assertTrue(e.getMessage().contains("KOLO_HIERARCHICAL_ALLREDUCE='maybe'"), e.getMessage());
    }

    /** Ranks started with different settings would pick different algorithms and hang: every rank fails instead. */
    @Test
    void mismatchedSettingsFailOnEveryRank() {
        List<String> errors = Ranks.runOps(4, t -> new FlatCollectives(t), c -> {
            AlgorithmSettings mine = c.rank() == 3
                    ? new AlgorithmSettings(AlgorithmSettings.Mode.OFF, AlgorithmSettings.Mode.OFF)
                    : AlgorithmSettings.defaults();
            Topology me = packed(2, 2).get(c.rank());
            KoloException e = assertThrows(KoloException.class, () -> Hierarchy.agree(c, me, "h" + c.rank() / 2, mine));
            return e.getMessage();
        });
        for (String m : errors) {
            assertEquals(errors.getFirst(), m);
            assertTrue(m.contains("rank 3 runs with") && m.contains("KOLO_HIERARCHICAL_ALLREDUCE"), m);
        }
        List<Hosts> agreed = Ranks.runOps(4, t -> new FlatCollectives(t),
                c -> Hierarchy.agree(c, packed(2, 2).get(c.rank()), "h" + c.rank() / 2, AlgorithmSettings.defaults()));
        for (Hosts a : agreed) {
            assertEquals("Hosts[0, 0, 1, 1]", a.toString());
        }
    }

    @Test
    void subgroupRenumbersAndValidates() {
        List<Transport> four = LocalTransport.group(4, Duration.ofSeconds(5));
        SubgroupTransport view = new SubgroupTransport(four.get(3), new int[] {3, 1});
        assertEquals(0, view.rank());
        assertEquals(2, view.size());
        assertThrows(IllegalArgumentException.class, () -> new SubgroupTransport(four.get(0), new int[] {1, 2}));
        assertThrows(IllegalArgumentException.class, () -> new SubgroupTransport(four.get(0), new int[] {0, 0}));
        assertThrows(IllegalArgumentException.class, () -> new SubgroupTransport(four.get(0), new int[] {0, 4}));
        four.forEach(Transport::close);
    }
}
