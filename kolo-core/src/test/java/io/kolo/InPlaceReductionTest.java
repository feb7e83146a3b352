package io.kolo;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A tensor alone in its response is reduced (or broadcast) directly in the caller's memory, heap or native,
 * without the fusion buffer; several tensors still go through it. Both ways must give bit-identical results,
 * with prescale, postscale and AVERAGE applied exactly once.
 */
class InPlaceReductionTest {
    private static final int RANKS = 3;
    /** Small (recursive doubling) and large (ring, uneven blocks) sizes. */
    private static final int[] LENGTHS = {5, 40_003};

    private record Case(String name, ReduceOp op, double prescale, double postscale) {
    }

    private static final List<Case> CASES = List.of(
            new Case("sum", ReduceOp.SUM, 1, 1),
            new Case("average", ReduceOp.AVERAGE, 1, 1),
            new Case("scaled", ReduceOp.SUM, 0.5, 3),
            new Case("scaledAverage", ReduceOp.AVERAGE, 2, 0.25),
            new Case("max", ReduceOp.MAX, 1, 1));

    private static float value(int rank, int i) {
        return (rank + 1) * (i % 7 + 1);
    }

    private static Tensor floats(boolean offHeap, int rank, int len) {
        if (offHeap) {
            MemorySegment seg = Arena.ofAuto().allocate(4L * len, 4);
            for (int i = 0; i < len; i++) {
                seg.setAtIndex(ValueLayout.JAVA_FLOAT, i, value(rank, i));
            }
            return Tensor.of(seg, DataType.FLOAT32, len);
        }
        float[] a = new float[len];
        for (int i = 0; i < len; i++) {
            a[i] = value(rank, i);
        }
        return Tensor.of(a);
    }

    private static float[] read(Tensor t) {
        return t.isNative() ? t.segment().toArray(ValueLayout.JAVA_FLOAT) : t.floats().clone();
    }

    /** Every case and length, each tensor alone ({@code grouped == false}) or all fused in one group. */
    private static List<float[]> run(Map<String, String> settings, boolean offHeap, boolean grouped) {
        return Ranks.run(RANKS, settings, comm -> {
            List<Tensor> tensors = new ArrayList<>();
            List<Handle<?>> handles = new ArrayList<>();
            for (Case c : CASES) {
                List<Tensor> group = new ArrayList<>();
                for (int len : LENGTHS) {
                    group.add(floats(offHeap, comm.rank(), len));
                }
                tensors.addAll(group);
                if (grouped && c.prescale() == 1 && c.postscale() == 1) {
                    handles.add(comm.groupedAllreduceAsync(c.name(), group, c.op()));
                } else {
                    for (int k = 0; k < group.size(); k++) {
                        handles.add(comm.allreduceAsync(c.name() + "." + k, group.get(k), c.op(), c.prescale(),
                                c.postscale()));
                        if (!grouped) {
                            handles.getLast().await();
                        }
                    }
                }
            }
            for (Handle<?> h : handles) {
                h.await();
            }
            List<float[]> out = new ArrayList<>();
            for (Tensor t : tensors) {
                out.add(read(t));
            }
            return out;
        }).stream().reduce((a, b) -> {
            for (int i = 0; i < a.size(); i++) {
                assertArrayEquals(a.get(i), b.get(i), "ranks disagree on tensor " + i);
            }
            return a;
        }).orElseThrow();
    }

    private static float expected(Case c, int i) {
        double sum = 0;
        double max = Double.NEGATIVE_INFINITY;
        for (int r = 0; r < RANKS; r++) {
            float v = (float) (value(r, i) * c.prescale());
            sum += v;
            max = Math.max(max, v);
        }
        double reduced = c.op() == ReduceOp.MAX ? max : sum;
        double post = c.op() == ReduceOp.AVERAGE ? c.postscale() / RANKS : c.postscale();
        return (float) (reduced * post);
    }

    @Test
    void aloneOrFusedHeapOrNativeTheResultsAreBitIdenticalAndCorrect() {
        List<float[]> reference = run(Map.of("KOLO_FUSION_THRESHOLD", "0"), false, false);
        int t = 0;
        for (Case c : CASES) {
            for (int len : LENGTHS) {
                float[] got = reference.get(t++);
                assertEquals(len, got.length);
                for (int i = 0; i < len; i++) {
                    assertEquals(expected(c, i), got[i], 0f, c.name() + "[" + i + "] of " + len);
                }
            }
        }
        List<float[]> nativeAlone = run(Map.of("KOLO_FUSION_THRESHOLD", "0"), true, false);
        List<float[]> heapFused = run(Map.of(), false, true);
        List<float[]> nativeFused = run(Map.of(), true, true);
        for (int i = 0; i < reference.size(); i++) {
            assertArrayEquals(reference.get(i), nativeAlone.get(i), "native alone, tensor " + i);
            assertArrayEquals(reference.get(i), heapFused.get(i), "heap fused, tensor " + i);
            assertArrayEquals(reference.get(i), nativeFused.get(i), "native fused, tensor " + i);
        }
    }

    @Test
    void heapBroadcastIsWrittenInPlaceOnEveryRank() {
        List<double[]> got = Ranks.run(RANKS, comm -> {
            double[] x = new double[10_000];
            java.util.Arrays.fill(x, comm.rank() + 0.5);
            comm.broadcast(Tensor.of(x), 1);
            return x;
        });
        for (double[] x : got) {
            for (double v : x) {
                assertEquals(1.5, v, 0.0);
            }
        }
    }

    @SuppressWarnings("unchecked")
    @Test
    void theTimelineShowsNoFusionCopiesForATensorAloneAndCopiesForAGroup(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("timeline.json");
        Ranks.run(2, Map.of("KOLO_TIMELINE", file.toString()), comm -> {
            comm.allreduceAsync("alone", Tensor.of(new float[1000]), ReduceOp.SUM).await();
            comm.groupedAllreduceAsync("pair", List.of(Tensor.of(new float[10]), Tensor.of(new float[20])),
                    ReduceOp.SUM).await();
            return null;
        });
        List<Map<String, Object>> events = (List<Map<String, Object>>) Json.parse(file);
        Map<Object, Object> rows = events.stream().filter(e -> "process_name".equals(e.get("name")))
                .collect(Collectors.toMap(e -> e.get("pid"), e -> ((Map<?, ?>) e.get("args")).get("name")));
        Set<Object> copied = events.stream().filter(e -> "MEMCPY_IN_FUSION_BUFFER".equals(e.get("name")))
                .map(e -> rows.get(e.get("pid"))).collect(Collectors.toSet());
        Set<Object> reduced = events.stream().filter(e -> "ALLREDUCE".equals(e.get("name")))
                .map(e -> rows.get(e.get("pid"))).collect(Collectors.toSet());
        assertTrue(reduced.containsAll(Set.of("alone", "pair.0", "pair.1")), "reduced: " + reduced);
        assertFalse(copied.contains("alone"), "a tensor alone was copied into the fusion buffer");
        assertTrue(copied.containsAll(Set.of("pair.0", "pair.1")), "copied: " + copied);
    }
}
