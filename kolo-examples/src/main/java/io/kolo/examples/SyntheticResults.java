package io.kolo.examples;

import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.IOException;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Rank 0's figures of one synthetic run, Kolo's and (with {@code --compare}) PyTorch DDP's side by side: the
 * comparison table and the {@code --json} file. Scaling efficiency is {@code total / (np × np=1)} for both, each
 * against its own np=1 run, so that the two frameworks' different single-rank speeds do not enter it.
 */
record SyntheticResults(String model, int batchSize, int ranks, int threads, long parameters, List<String> shapes,
                        KoloFigures kolo, DdpFigures ddp) {
    private static final JsonMapper JSON = new JsonMapper();

    /**
     * Kolo+DJL's figures; {@code baseline} and {@code ceilingPerRank} are 0 when not measured, {@code iterations}
     * holds each iteration's scaling efficiency (empty when not measured). {@code averagingMs} is rank 0's averaging
     * per step, its wait for the slower rank's backward pass included; {@code averagingOwnMs} Kolo's own part of it
     * ({@link SyntheticMode#ownAveragingMillis}).
     */
    record KoloFigures(double perRank, double total, double totalConf, double baseline, double ceilingPerRank,
                       double averagingMs, double averagingOwnMs, double stepMs, double[] iterations) {
    }

    /** PyTorch DDP's figures over its measured turns, or why it did not run ({@code skipped} not null). */
    record DdpFigures(String skipped, long parameters, List<String> shapes, String torchVersion, List<DdpPeer.Turn> turns) {
        static DdpFigures skipped(String why) {
            return new DdpFigures(why, 0, List.of(), "", List.of());
        }

        double np1() {
            return SyntheticExample.mean(turns.stream().mapToDouble(DdpPeer.Turn::np1).toArray());
        }

        double total() {
            return SyntheticExample.mean(turns.stream().mapToDouble(DdpPeer.Turn::total).toArray());
        }

        double totalConf() {
            double[] v = turns.stream().mapToDouble(DdpPeer.Turn::total).toArray();
            return 1.96 * SyntheticExample.std(v, SyntheticExample.mean(v));
        }

        double[] iterations(int ranks) {
            return turns.stream().mapToDouble(t -> t.np1() > 0 ? t.total() / (ranks * t.np1()) : 0).toArray();
        }

        double phase(java.util.function.ToDoubleFunction<DdpPeer.Turn> f) {
            return SyntheticExample.mean(turns.stream().mapToDouble(f).toArray());
        }
    }

    /** Each iteration's {@code total / (ranks × np=1)}, from the per-iteration totals and np=1 rates. */
    static double[] efficiencies(double[] totals, double[] np1, int ranks) {
        if (totals == null || np1 == null) {
            return new double[0];
        }
        double[] out = new double[Math.min(totals.length, np1.length)];
        for (int i = 0; i < out.length; i++) {
            out[i] = np1[i] > 0 ? totals[i] / (ranks * np1[i]) : 0;
        }
        return out;
    }

    static double median(double[] v) {
        if (v.length == 0) {
            return 0;
        }
        double[] sorted = v.clone();
        java.util.Arrays.sort(sorted);
        int n = sorted.length;
        return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    }

    /** Kolo's own averaging as a share of the step. */
    double ownShare() {
        return kolo.stepMs > 0 ? kolo.averagingOwnMs / kolo.stepMs : 0;
    }

    double koloEfficiency() {
        return kolo.baseline > 0 ? kolo.total / (ranks * kolo.baseline) : 0;
    }

    double ddpEfficiency() {
        return ddpRan() && ddp.np1() > 0 ? ddp.total() / (ranks * ddp.np1()) : 0;
    }

    double ceilingEfficiency() {
        return kolo.baseline > 0 ? kolo.ceilingPerRank / kolo.baseline : 0;
    }

    boolean ddpRan() {
        return ddp != null && ddp.skipped == null && !ddp.turns.isEmpty();
    }

    /** The comparison table and what stands under it; empty without {@code --compare}. */
    List<String> table() {
        List<String> out = new ArrayList<>();
        if (ddp == null) {
            return out;
        }
        out.add(String.format(Locale.ROOT, "Training beside PyTorch DDP: %s, batch %d per rank, %d compute thread(s)"
                + " per rank, turns taken iteration by iteration", model, batchSize, threads));
        if (!ddpRan()) {
            out.add("No PyTorch DDP row: " + (ddp.skipped != null ? ddp.skipped : "no measured turn"));
        }
        out.add(String.format(Locale.ROOT, "| | np=1 img/sec | np=%d total img/sec | scaling efficiency |", ranks));
        out.add("|---|---|---|---|");
        out.add(String.format(Locale.ROOT, "| Kolo+DJL | %.1f | %.1f +-%.1f | %.1f%% |", kolo.baseline, kolo.total,
                kolo.totalConf, 100 * koloEfficiency()));
        if (ddpRan()) {
            out.add(String.format(Locale.ROOT, "| PyTorch DDP (gloo) | %.1f | %.1f +-%.1f | %.1f%% |", ddp.np1(),
                    ddp.total(), ddp.totalConf(), 100 * ddpEfficiency()));
        }
        out.add(String.format(Locale.ROOT, "| ceiling (Kolo+DJL's ranks alone at once, no averaging) | %.1f | %.1f"
                + " | %.1f%% |", kolo.baseline, ranks * kolo.ceilingPerRank, 100 * ceilingEfficiency()));
        if (ddpRan()) {
            out.add(String.format(Locale.ROOT, "Parameters: Kolo+DJL %,d, PyTorch %,d (torch %s): %s", parameters,
                    ddp.parameters, ddp.torchVersion, architecture()));
            out.add(String.format(Locale.ROOT, "Per step on rank 0: Kolo+DJL %.1f ms, of which gradient averaging"
                    + " %.1f ms after the backward pass (Kolo's own %.1f ms, %.1f%% of the step; the rest is waiting for"
                    + " the slower rank's backward); DDP forward %.1f, backward %.1f (np=1: %.1f; its allreduce"
                    + " overlaps the backward pass, so the difference is what it exposes), optimizer %.1f ms",
                    kolo.stepMs, kolo.averagingMs, kolo.averagingOwnMs, 100 * ownShare(),
                    ddp.phase(DdpPeer.Turn::forwardMs),
                    ddp.phase(DdpPeer.Turn::backwardMs), ddp.phase(DdpPeer.Turn::np1BackwardMs),
                    ddp.phase(DdpPeer.Turn::stepMs)));
            // A paired figure: each iteration's np=N run against the np=1 run just before it, so that the machine's
            // drift between iterations (large on a shared VM) cancels; the median resists single slow iterations.
            out.add(String.format(Locale.ROOT, "Median of the per-iteration scaling efficiencies (each np=%d run"
                    + " against the np=1 run of the same iteration): Kolo+DJL %.1f%%, PyTorch DDP %.1f%%", ranks,
                    100 * median(kolo.iterations), 100 * median(ddp.iterations(ranks))));
            out.add(String.format(Locale.ROOT, "Kolo's scaling efficiency %s DDP's (%.1f%% vs %.1f%%)",
                    koloEfficiency() >= ddpEfficiency() ? ">=" : "<", 100 * koloEfficiency(), 100 * ddpEfficiency()));
        }
        return out;
    }

    /** Whether both sides train the same network: the trainable tensors' shapes, in order. */
    String architecture() {
        if (shapes.equals(ddp.shapes)) {
            return shapes.size() + " trainable tensors, the same shapes in the same order";
        }
        int i = 0;
        while (i < shapes.size() && i < ddp.shapes.size() && shapes.get(i).equals(ddp.shapes.get(i))) {
            i++;
        }
        return String.format(Locale.ROOT, "ARCHITECTURES DIFFER: %d vs %d trainable tensors, first difference at"
                        + " tensor %d (%s vs %s)", shapes.size(), ddp.shapes.size(), i,
                i < shapes.size() ? shapes.get(i) : "none", i < ddp.shapes.size() ? ddp.shapes.get(i) : "none");
    }

    void writeJson(Path file) throws IOException {
        ObjectNode j = JSON.createObjectNode();
        j.put("model", model).put("batch_size", batchSize).put("ranks", ranks).put("threads", threads)
                .put("parameters", parameters);
        j.putObject("kolo").put("np1_img_sec", round(kolo.baseline, 3)).put("per_rank_img_sec", round(kolo.perRank, 3))
                .put("total_img_sec", round(kolo.total, 3)).put("total_conf", round(kolo.totalConf, 3))
                .put("scaling_efficiency", round(koloEfficiency(), 4)).put("averaging_ms", round(kolo.averagingMs, 2))
                .put("averaging_own_ms", round(kolo.averagingOwnMs, 2)).put("averaging_own_share", round(ownShare(), 4))
                .put("step_ms", round(kolo.stepMs, 2))
                .put("median_iteration_efficiency", round(median(kolo.iterations), 4));
        j.putObject("ceiling").put("per_rank_img_sec", round(kolo.ceilingPerRank, 3))
                .put("scaling_efficiency", round(ceilingEfficiency(), 4));
        if (ddp != null) {
            ObjectNode d = j.putObject("ddp");
            if (ddpRan()) {
                d.put("torch", ddp.torchVersion).put("parameters", ddp.parameters)
                        .put("same_architecture", shapes.equals(ddp.shapes)).put("np1_img_sec", round(ddp.np1(), 3))
                        .put("total_img_sec", round(ddp.total(), 3)).put("total_conf", round(ddp.totalConf(), 3))
                        .put("scaling_efficiency", round(ddpEfficiency(), 4))
                        .put("forward_ms", round(ddp.phase(DdpPeer.Turn::forwardMs), 2))
                        .put("backward_ms", round(ddp.phase(DdpPeer.Turn::backwardMs), 2))
                        .put("np1_backward_ms", round(ddp.phase(DdpPeer.Turn::np1BackwardMs), 2))
                        .put("step_ms", round(ddp.phase(DdpPeer.Turn::stepMs), 2))
                        .put("median_iteration_efficiency", round(median(ddp.iterations(ranks)), 4));
            } else {
                d.put("skipped", ddp.skipped != null ? ddp.skipped : "no measured turn");
            }
        }
        JSON.writerWithDefaultPrettyPrinter().writeValue(file.toFile(), j);
    }

    /** {@code v} to {@code places} decimals, as the figures are printed; NaN and infinities as they are. */
    private static double round(double v, int places) {
        return Double.isFinite(v) ? BigDecimal.valueOf(v).setScale(places, RoundingMode.HALF_UP).doubleValue() : v;
    }
}
