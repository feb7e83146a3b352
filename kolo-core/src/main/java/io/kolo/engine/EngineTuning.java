package io.kolo.engine;

import io.kolo.collective.AlgorithmSettings;
import io.kolo.collective.CollectiveOps;

import java.util.function.Consumer;

/**
 * A process set's side of autotuning: on the global set's rank 0 it feeds the {@link Autotuner} the bytes each cycle
 * moved and hands its choices to the coordinator round; on every rank it applies a choice received in a cycle's
 * round at the end of that cycle, so that every rank fuses, caches and routes alike from the next one.
 */
final class EngineTuning {
    private final FusionPlanner fusion;
    private final CycleRunner runner;
    private final ResponseCache cache;
    private final Admission admission;
    private final CollectiveOps ops;
    /** Rank 0 of the global set with KOLO_AUTOTUNE=1: chooses the settings; null elsewhere. */
    private final Autotuner tuner;
    /** The choice received in this cycle's coordinator round; null until then. */
    private Autotuner.Tuning received;
    private final Consumer<Autotuner.Tuning> receiver = t -> received = t;
    /** Bytes the ops of this cycle moved (the autotuner's score). */
    private long ranBytes;

    EngineTuning(int set, int rank, EngineSettings settings, CollectiveOps ops, FusionPlanner fusion,
                 CycleRunner runner, ResponseCache cache, Admission admission) {
        this.fusion = fusion;
        this.runner = runner;
        this.cache = cache;
        this.admission = admission;
        this.ops = ops;
        AutotuneSettings autotune = settings.autotune() == null ? null
                : settings.autotune().forJob(settings.cacheCapacity() > 0, ops.hierarchyAvailable());
        boolean hierarchy = ops.hierarchyAvailable();
        this.tuner = set == 0 && rank == 0 && autotune != null && autotune.tunesAnything()
                ? new Autotuner(autotune, new Autotuner.Tuning(settings.fusionThresholdBytes(),
                settings.cycleTime().toNanos(), settings.cacheCapacity() > 0,
                hierarchy && settings.algorithms().hierarchicalAllreduce() != AlgorithmSettings.Mode.OFF,
                hierarchy && settings.algorithms().hierarchicalAllgather() != AlgorithmSettings.Mode.OFF))
                : null;
    }

    /** Whether rank 0 has a choice to send: the cycle then runs a coordinator round on every rank. */
    boolean hasPending() {
        return tuner != null && tuner.hasPending();
    }

    /** Rank 0's choice for this cycle's coordinator round, or null. */
    Autotuner.Tuning takePending() {
        return tuner == null ? null : tuner.takePending();
    }

    /** Where the coordinator round delivers rank 0's choice. */
    Consumer<Autotuner.Tuning> receiver() {
        return receiver;
    }

    /** An op of this cycle moved {@code bytes}. */
    void ran(long bytes) {
        ranBytes += bytes;
    }

    /** The cycle's ops are done: score them, and apply a choice received in this cycle. */
    void endOfCycle() {
        if (tuner != null && ranBytes > 0) {
            tuner.step(ranBytes, System.nanoTime());
        }
        ranBytes = 0;
        Autotuner.Tuning t = received;
        if (t == null) {
            return;
        }
        received = null;
        fusion.setThreshold(t.fusionThresholdBytes());
        runner.setCycleTime(t.cycleNanos());
        if (cache.enabled() != t.cache() && cache.capacity() > 0) {
            if (!t.cache()) {
                // What waits at a cache position goes the slow way, on every rank alike.
                admission.unparkAll();
            }
            cache.setEnabled(t.cache());
        }
        ops.hierarchical(t.hierarchicalAllreduce(), t.hierarchicalAllgather());
        if (tuner != null) {
            tuner.applied(System.nanoTime());
        }
    }
}
