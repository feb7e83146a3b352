package io.kolo.engine;

import io.kolo.bootstrap.IoReason;
import io.kolo.bootstrap.LazyLogger;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.StandardOpenOption;
import java.util.Locale;

/**
 * Horovod's parameter manager, on the global set's rank 0 ({@code KOLO_AUTOTUNE=1}): measures the bytes the job
 * reduces per second over samples of {@code KOLO_AUTOTUNE_STEPS_PER_SAMPLE} cycles that ran ops, discards the first
 * {@code KOLO_AUTOTUNE_WARMUP_SAMPLES}, and lets {@link BayesianOptimizer} pick the fusion threshold and cycle time of
 * each next sample until {@code KOLO_AUTOTUNE_BAYES_OPT_MAX_SAMPLES}; then it settles on the best and stops. Each new
 * choice travels to every rank with the next coordinator round ({@link ControlMessages}) and applies at the end of that
 * cycle everywhere, so the ranks always fuse alike. Settings the user fixed keep their value.
 */
final class Autotuner {
    private static final System.Logger LOG = LazyLogger.of(Autotuner.class);
    /** Fusion threshold: off below this point of its axis, else 64 KiB .. 256 MiB on a log scale. */
    private static final double FUSION_OFF_BELOW = 0.05;
    private static final double MIN_FUSION_LOG2 = 16;
    private static final double MAX_FUSION_LOG2 = 28;
    /**
     * Cycle times tried, on a log scale: from a tenth of the default (negotiation as often as a small op can use) to
     * Horovod's largest, past which a step's gradients wait on negotiation more than they gain from fusing.
     */
    private static final double MIN_CYCLE_LOG10_MS = -1;
    private static final double MAX_CYCLE_LOG10_MS = Math.log10(25);

    /** One choice of the tuned settings. */
    record Tuning(long fusionThresholdBytes, long cycleNanos, boolean cache, boolean hierarchicalAllreduce,
                  boolean hierarchicalAllgather) {
    }

    private final AutotuneSettings settings;
    private final Tuning fixed;
    private final BayesianOptimizer optimizer = new BayesianOptimizer(5, 0x6b6f6c6fL);
    private double[] current;
    private Tuning pending;
    private int warmupLeft;
    private int sample;
    private int steps;
    private long bytes;
    private long sampleStart;
    private boolean done;
    /** The log could not be written: said once, then no more tries (every sample would say it again). */
    private boolean logFailed;

    /** @param initial the settings the job started with (the user's or the defaults) */
    Autotuner(AutotuneSettings settings, Tuning initial) {
        this.settings = settings;
        this.fixed = initial;
        this.current = encode(initial);
        this.warmupLeft = settings.warmupSamples();
        this.sampleStart = System.nanoTime();
        log("sample,phase,fusion_threshold_bytes,cycle_time_ms,cache,hierarchical_allreduce,hierarchical_allgather,"
                + "score_bytes_per_second");
    }

    /** Whether a new choice waits for the next coordinator round. */
    boolean hasPending() {
        return pending != null;
    }

    Tuning takePending() {
        Tuning t = pending;
        pending = null;
        return t;
    }

    /** A cycle that ran ops moving {@code ranBytes} ended at {@code now}. */
    void step(long ranBytes, long now) {
        if (done || pending != null) {
            return;
        }
        bytes += ranBytes;
        if (++steps < settings.stepsPerSample()) {
            return;
        }
        double seconds = Math.max(1e-9, (now - sampleStart) / 1e9);
        double score = bytes / seconds;
        Tuning measured = decode(current);
        sample++;
        if (warmupLeft > 0) {
            warmupLeft--;
            log(row("warmup", measured, score));
            restart(now);
            return;
        }
        optimizer.observe(current, score);
        log(row("sample", measured, score));
        if (optimizer.samples() >= settings.maxSamples()) {
            done = true;
            current = optimizer.best();
            Tuning best = decode(current);
            String chosen = "Kolo autotune chose fusion threshold " + best.fusionThresholdBytes() + " bytes, cycle time "
                    + String.format(Locale.ROOT, "%.3f", best.cycleNanos() / 1e6) + " ms, response cache "
                    + (best.cache() ? "on" : "off") + ", hierarchical allreduce " + (best.hierarchicalAllreduce() ? "on"
                    : "off") + ", hierarchical allgather " + (best.hierarchicalAllgather() ? "on" : "off") + " after "
                    + sample + " samples";
            // Shown once, as the kolo: line below; the logger's copy is for KOLO_LOG_LEVEL=debug, beside the rest.
            LOG.log(System.Logger.Level.DEBUG, chosen);
            System.err.println("kolo: " + chosen.substring("Kolo ".length()));
            log("# " + chosen);
            pending = best;
            return;
        }
        current = optimizer.suggest();
        pending = decode(current);
        restart(now);
    }

    /** The choice took effect at {@code now}: the next sample measures it from here. */
    void applied(long now) {
        restart(now);
    }

    private void restart(long now) {
        steps = 0;
        bytes = 0;
        sampleStart = now;
    }

    private String row(String phase, Tuning t, double score) {
        return sample + "," + phase + "," + t.fusionThresholdBytes() + ","
                + String.format(Locale.ROOT, "%.3f", t.cycleNanos() / 1e6) + "," + onOff(t.cache()) + ","
                + onOff(t.hierarchicalAllreduce()) + "," + onOff(t.hierarchicalAllgather()) + ","
                + String.format(Locale.ROOT, "%.0f", score);
    }

    private static String onOff(boolean b) {
        return b ? "on" : "off";
    }

    private double[] encode(Tuning t) {
        double f = t.fusionThresholdBytes() <= 0 ? 0
                : FUSION_OFF_BELOW + (1 - FUSION_OFF_BELOW) * clamp((log2(t.fusionThresholdBytes()) - MIN_FUSION_LOG2)
                / (MAX_FUSION_LOG2 - MIN_FUSION_LOG2));
        double c = clamp((Math.log10(Math.max(1, t.cycleNanos()) / 1e6) - MIN_CYCLE_LOG10_MS)
                / (MAX_CYCLE_LOG10_MS - MIN_CYCLE_LOG10_MS));
        return new double[]{f, c, t.cache() ? 0.75 : 0.25, t.hierarchicalAllreduce() ? 0.75 : 0.25,
                t.hierarchicalAllgather() ? 0.75 : 0.25};
    }

    private Tuning decode(double[] x) {
        long fusion = fixed.fusionThresholdBytes();
        if (settings.tuneFusionThreshold()) {
            fusion = x[0] < FUSION_OFF_BELOW ? 0 : Math.round(Math.pow(2, MIN_FUSION_LOG2
                    + (x[0] - FUSION_OFF_BELOW) / (1 - FUSION_OFF_BELOW) * (MAX_FUSION_LOG2 - MIN_FUSION_LOG2)));
        }
        long cycle = fixed.cycleNanos();
        if (settings.tuneCycleTime()) {
            cycle = Math.round(Math.pow(10, MIN_CYCLE_LOG10_MS + x[1] * (MAX_CYCLE_LOG10_MS - MIN_CYCLE_LOG10_MS)) * 1e6);
        }
        boolean cache = settings.tuneCache() ? x[2] >= 0.5 : fixed.cache();
        boolean hierAllreduce = settings.tuneHierarchicalAllreduce() ? x[3] >= 0.5 : fixed.hierarchicalAllreduce();
        boolean hierAllgather = settings.tuneHierarchicalAllgather() ? x[4] >= 0.5 : fixed.hierarchicalAllgather();
        return new Tuning(fusion, cycle, cache, hierAllreduce, hierAllgather);
    }

    private static double log2(long v) {
        return Math.log(v) / Math.log(2);
    }

    private static double clamp(double v) {
        return Math.max(0, Math.min(1, v));
    }

    private void log(String line) {
        if (settings.log() == null || logFailed) {
            return;
        }
        try {
            Files.writeString(settings.log(), line + "\n", StandardCharsets.UTF_8, StandardOpenOption.CREATE,
                    StandardOpenOption.WRITE, line.startsWith("sample,phase") ? StandardOpenOption.TRUNCATE_EXISTING
                            : StandardOpenOption.APPEND);
        } catch (IOException e) {
            logFailed = true;
            LOG.log(System.Logger.Level.WARNING, "KOLO_AUTOTUNE_LOG: cannot write " + settings.log() + ": "
                    + IoReason.of(e) + "; autotuning goes on without its log");
        }
    }
}
