package io.kolo.examples;

import ai.djl.Model;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDList;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.Shape;
import ai.djl.training.DefaultTrainingConfig;
import ai.djl.training.GradientCollector;
import io.kolo.Communicator;
import io.kolo.Kolo;
import io.kolo.djl.DistributedOptions;
import io.kolo.djl.DistributedTrainer;

import java.util.Locale;

/**
 * One way of training measured side by side with the others, iteration by iteration (so that drift in the
 * machine's speed, which is large on shared VMs, reaches all alike): the distributed run, or training without
 * gradient averaging through a one-rank communicator. Without averaging, rank 0 alone trains (the np=1
 * baseline, the other ranks wait idle), or every rank trains a model of its own at the same time (the ceiling:
 * what the ranks would reach if communication cost nothing, since they still share the machine's cores, caches
 * and memory). Those meet at a barrier after each batch, so that every rank's step waits for the slowest as in
 * synchronous training, and no wait comes near Kolo's stall warning or timeout however slow a batch is.
 */
final class SyntheticMode implements AutoCloseable {
    final Kind kind;
    final DistributedTrainer trainer;
    final Model model;
    final Communicator alone;
    final boolean barrierPerBatch;
    final double[] rates;
    /** Each measured step's averaging on this rank, in milliseconds, in order. */
    final float[] stepAveragingMillis;
    private int stepsRecorded;
    long averagingNanos;
    long stepNanos;
    long steps;

    SyntheticMode(Kind kind, DistributedTrainer trainer, Model model, Communicator alone, boolean barrierPerBatch,
                  int iterations, int batchesPerIter) {
        this.kind = kind;
        this.trainer = trainer;
        this.model = model;
        this.alone = alone;
        this.barrierPerBatch = barrierPerBatch;
        this.rates = new double[iterations];
        this.stepAveragingMillis = new float[iterations * batchesPerIter];
    }

    static SyntheticMode alone(Kind kind, boolean trains, SyntheticExample.Settings s, DefaultTrainingConfig config,
                               DistributedOptions options, Shape sample) {
        if (!trains) {
            return new SyntheticMode(kind, null, null, null, true, s.iters(), s.batchesPerIter());
        }
        // A model of its own: a second trainer on the measured model would re-initialise parameters that the
        // first one still references, and slows every later step of that model down several times.
        Model model = Model.newInstance(kind.name().toLowerCase(Locale.ROOT) + "-" + s.model());
        model.setBlock(SyntheticModels.block(s.model(), s.imageSize()));
        Communicator alone = Communicator.local(1).getFirst();
        DistributedTrainer trainer = new DistributedTrainer(model, config, alone, options);
        trainer.initialize(sample);
        return new SyntheticMode(kind, trainer, model, alone, true, s.iters(), s.batchesPerIter());
    }

    void warmUp(SyntheticExample.Settings s, NDArray data, NDArray labels) {
        for (int i = 0; i < s.warmup(); i++) {
            if (trainer != null) {
                batch(trainer, data, labels);
            }
            if (barrierPerBatch) {
                Kolo.barrier();
            }
        }
    }

    void iteration(int it, SyntheticExample.Settings s, NDArray data, NDArray labels) {
        long averagingBefore = trainer != null ? trainer.gradientAveragingTime().toNanos() : 0;
        // The barrier's wait is timed: with communication for free, synchronous training would still wait for
        // the slowest rank at every step. (Rank 0 alone waits for nobody: the idle ranks are there first.)
        long start = System.nanoTime();
        for (int b = 0; b < s.batchesPerIter(); b++) {
            if (trainer != null) {
                long before = trainer.gradientAveragingTime().toNanos();
                batch(trainer, data, labels);
                recordStep(trainer.gradientAveragingTime().toNanos() - before);
            }
            if (barrierPerBatch) {
                Kolo.barrier();
            }
        }
        long nanos = System.nanoTime() - start;
        if (trainer != null) {
            account(it, s.batchSize(), s.batchesPerIter(), nanos,
                    trainer.gradientAveragingTime().toNanos() - averagingBefore);
        }
        if (Kolo.rank() == 0) {
            System.out.printf(Locale.ROOT, "Iter #%d: %.1f img/sec %s%n", it, rates[it],
                    kind.label);
        }
    }

    /**
     * One measured iteration of a rank that trained: {@code batches} steps of {@code batchSize} images took
     * {@code nanos}, of which {@code averaging} went to averaging gradients.
     */
    void account(int it, int batchSize, int batches, long nanos, long averaging) {
        rates[it] = batchSize * batches / (nanos / 1e9);
        stepNanos += nanos;
        steps += batches;
        averagingNanos += averaging;
    }

    /** One measured step's averaging on this rank. */
    void recordStep(long averagingNanos) {
        if (stepsRecorded < stepAveragingMillis.length) {
            stepAveragingMillis[stepsRecorded++] = (float) (averagingNanos / 1e6);
        }
    }

    /**
     * Kolo's own part of the averaging, in milliseconds per step, from every rank's {@link #stepAveragingMillis}
     * ({@code gathered}: rank 0's steps, then rank 1's...): per step the shortest of the ranks' averaging times. An
     * allreduce ends on every rank at about the same moment, so the rank whose backward pass ended last waited for
     * nobody, and its averaging is the collectives', the engine's and the trainer's own time; every other rank's
     * averaging is that plus its wait for the last one, which DDP's overlap hides and no allreduce can shorten.
     */
    static double ownAveragingMillis(float[] gathered, int ranks) {
        int steps = gathered.length / Math.max(1, ranks);
        if (steps == 0) {
            return 0;
        }
        double sum = 0;
        for (int step = 0; step < steps; step++) {
            float shortest = Float.MAX_VALUE;
            for (int r = 0; r < ranks; r++) {
                shortest = Math.min(shortest, gathered[r * steps + step]);
            }
            sum += shortest;
        }
        return sum / steps;
    }

    /**
     * Gradient averaging per measured step, in milliseconds: a share of {@link #stepMillis}, over the same steps. (One
     * averaging per step: the benchmark accumulates no gradients.)
     */
    double averagingMillisPerStep() {
        return averagingNanos / 1e6 / Math.max(1, steps);
    }

    /**
     * The measured steps' mean time, in milliseconds: their total time over their number. Not from the mean of the
     * iterations' img/sec, which one fast iteration pulls up, so that averaging could exceed the step it is part of.
     */
    double stepMillis() {
        return stepNanos / 1e6 / Math.max(1, steps);
    }

    /** The mean img/sec of the ranks that trained in this mode. */
    double meanPerTrainingRank() {
        double mine = trainer != null ? SyntheticExample.mean(rates) : 0;
        long[] sums = {Math.round(mine * 1000), trainer != null ? 1 : 0};
        Kolo.allreduce(sums, io.kolo.ReduceOp.SUM);
        return sums[0] / 1000.0 / Math.max(1, sums[1]);
    }

    @Override
    public void close() {
        if (trainer != null) {
            trainer.close();
        }
        if (alone != null) {
            alone.close();
        }
        if (model != null) {
            model.close();
        }
    }

    /** The ways of training the benchmark measures: what each iteration line says, and what the run is called. */
    enum Kind {
        BASELINE("(baseline, np=1)", "the np=1 baseline"),
        CEILING("(ceiling, every rank alone)", "the ceiling"),
        DISTRIBUTED("per rank", "the distributed run");

        final String label;
        final String title;

        Kind(String label, String title) {
            this.label = label;
            this.title = title;
        }
    }

    /**
     * One training step on the synthetic batch. The batch is copied into a manager of its own for the step, as
     * DJL's {@code Batch} would be: every intermediate array of the forward and backward pass attaches to its input's
     * manager, and on the long-lived arrays' manager they would stay until the run ends (measured: about 250 MB per
     * ResNet-18 step, until the machine ran out of memory).
     */
    private static void batch(DistributedTrainer trainer, NDArray data, NDArray labels) {
        try (NDManager step = data.getManager().newSubManager();
             GradientCollector collector = trainer.newGradientCollector()) {
            NDArray x = data.duplicate();
            NDArray y = labels.duplicate();
            x.attach(step);
            y.attach(step);
            NDList out = trainer.forward(new NDList(x));
            NDArray loss = trainer.getLoss().evaluate(new NDList(y), out);
            collector.backward(loss);
        }
        trainer.step();
    }
}
