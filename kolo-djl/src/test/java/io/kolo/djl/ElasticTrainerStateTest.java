package io.kolo.djl;

import ai.djl.Device;
import ai.djl.Model;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDList;
import ai.djl.ndarray.types.Shape;
import ai.djl.nn.Activation;
import ai.djl.nn.Parameter;
import ai.djl.nn.SequentialBlock;
import ai.djl.nn.core.Linear;
import ai.djl.training.DefaultTrainingConfig;
import ai.djl.training.GradientCollector;
import ai.djl.training.TrainingConfig;
import ai.djl.training.dataset.ArrayDataset;
import ai.djl.training.dataset.Batch;
import ai.djl.training.loss.Loss;
import ai.djl.training.optimizer.Optimizer;
import ai.djl.training.tracker.Tracker;
import ai.djl.util.Pair;
import io.kolo.Kolo;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.Random;
import java.util.function.IntFunction;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link ElasticTrainerState} in one process with real PyTorch: what a commit keeps and a restore gives back
 * (parameters, optimizer state, position, the sampler's place in the epoch, no leftover gradients), that a run with a
 * reset at a commit ends where the run without one does, and the trainer made per job. The broadcast of {@link
 * ElasticTrainerState#sync()} across ranks is exercised by {@link OptimizerStateTest} and kolo-examples' elastic MNIST
 * tests.
 */
@Timeout(120)
class ElasticTrainerStateTest {
    private static final int SAMPLES = 50;
    private static final int BATCH = 4;
    private static final int STEPS = 12;
    private static final int RESET_AT = 5;

    @BeforeAll
    static void engine() {
        KoloDjl.configureEngine(1);
    }

    @AfterEach
    void leave() {
        Kolo.shutdown();
    }

    private static SequentialBlock mlp() {
        return new SequentialBlock().add(Linear.builder().setUnits(8).build()).add(Activation::relu)
                .add(Linear.builder().setUnits(3).build());
    }

    private static ArrayDataset data(Model model, DistributedSampler sampler) {
        Random random = new Random(3);
        float[] x = new float[SAMPLES * 5];
        float[] y = new float[SAMPLES];
        for (int i = 0; i < x.length; i++) {
            x[i] = (float) random.nextGaussian();
        }
        for (int i = 0; i < SAMPLES; i++) {
            y[i] = random.nextInt(3);
        }
        return new ArrayDataset.Builder().setData(model.getNDManager().create(x, new Shape(SAMPLES, 5)))
                .optLabels(model.getNDManager().create(y)).setSampling(sampler).build();
    }

    private static List<float[]> parameters(Model model) {
        List<float[]> out = new ArrayList<>();
        for (Pair<String, Parameter> p : model.getBlock().getParameters()) {
            out.add(p.getValue().getArray().toFloatArray());
        }
        return out;
    }

    private static void backward(DistributedTrainer trainer, Batch batch) {
        try (batch; GradientCollector gc = trainer.newGradientCollector()) {
            NDList out = trainer.forward(batch.getData(), batch.getLabels());
            gc.backward(trainer.getLoss().evaluate(batch.getLabels(), out));
        }
    }

    @Test
    void aRestoreGivesBackTheCommittedParametersPositionAndSamplerPlace() throws Exception {
        Kolo.init();
        try (Model model = Model.newInstance("elastic-state")) {
            model.setBlock(mlp());
            DistributedSampler sampler = new DistributedSampler(0, 1, BATCH, true, 9, DistributedSampler.Tail.PAD);
            ArrayDataset train = data(model, sampler);
            List<Integer> sizes = new ArrayList<>();
            ElasticTrainerState state = new ElasticTrainerState(model, sampler, size -> {
                sizes.add(size);
                return new DefaultTrainingConfig(Loss.softmaxCrossEntropyLoss())
                        .optOptimizer(KoloOptimizers.adam().optLearningRateTracker(
                                new ScaledLearningRate(Tracker.fixed(0.05f), size, 0)).build())
                        .optDevices(new Device[]{Device.cpu()});
            }, new Shape(1, 5));
            assertTrue(model.getBlock().isInitialized(), "the state initialises the block from the input shapes");
            state.sync();
            try (DistributedTrainer trainer = state.newTrainer()) {
                assertEquals(List.of(1), sizes, "the config is made for the job's size");
                Iterator<Batch> batches = trainer.iterateDataset(train).iterator();
                for (int i = 0; i < 3; i++) {
                    backward(trainer, batches.next());
                    trainer.step();
                    state.batchDone();
                }
                state.commit();
                List<float[]> committed = parameters(model);
                assertEquals(0, state.epoch());
                assertEquals(3, state.batch());
                assertEquals(3 * BATCH, state.consumed());

                // Work after the commit, then a failure mid-step: gradients computed, not yet applied.
                for (int i = 0; i < 2; i++) {
                    backward(trainer, batches.next());
                    trainer.step();
                    state.batchDone();
                }
                backward(trainer, batches.next());
                assertFalse(Arrays.equals(committed.getFirst(), parameters(model).getFirst()), "training moved them");
                state.restore();

                List<float[]> restored = parameters(model);
                for (int i = 0; i < committed.size(); i++) {
                    assertArrayEquals(committed.get(i), restored.get(i), "parameter " + i);
                }
                assertEquals(List.of(0, 3, (long) 3 * BATCH), List.of(state.epoch(), state.batch(), state.consumed()));
                for (Pair<String, Parameter> p : model.getBlock().getParameters()) {
                    NDArray grad = p.getValue().getArray().getGradient();
                    assertEquals(0f, grad.abs().sum().getFloat(), "no gradient left in " + p.getKey());
                }
            }
            // The next pass over the data resumes the epoch after the committed samples.
            List<Long> resumed = new ArrayList<>();
            sampler.sample(train).forEachRemaining(resumed::addAll);
            long[] expected = new DistributedSampler(0, 1, BATCH, true, 9, DistributedSampler.Tail.PAD)
                    .indices(SAMPLES, 0, 3 * BATCH);
            assertEquals(Arrays.stream(expected).boxed().toList(), resumed);
            assertEquals(SAMPLES - 3 * BATCH, resumed.size());

            state.epochDone();
            state.commit();
            assertEquals(List.of(1, 0, 0L), List.of(state.epoch(), state.batch(), state.consumed()));
        }
    }

    /** How a run goes on after its reset, for {@link #train}. */
    private enum Reset { NONE, RESTORED, FRESH_OPTIMIZER }

    @Test
    void aResetAtACommitTrainsOnAsTheRunWithoutOneDid() throws Exception {
        Kolo.init();
        List<byte[]> initial;
        try (Model model = Model.newInstance("initial")) {
            model.setBlock(mlp());
            model.getBlock().initialize(model.getNDManager(), model.getDataType(), new Shape(1, 5));
            initial = ModelParameters.copy(model.getBlock());
        }
        List<float[]> uninterrupted = train(initial, Reset.NONE);
        List<float[]> restored = train(initial, Reset.RESTORED);
        List<float[]> fresh = train(initial, Reset.FRESH_OPTIMIZER);
        double freshDiff = 0;
        for (int i = 0; i < uninterrupted.size(); i++) {
            assertArrayEquals(uninterrupted.get(i), restored.get(i), "parameter " + i + " after the reset");
            for (int j = 0; j < uninterrupted.get(i).length; j++) {
                freshDiff = Math.max(freshDiff, Math.abs(uninterrupted.get(i)[j] - fresh.get(i)[j]));
            }
        }
        // What every reset did before the optimizer state was committed: Adam starts its moments again.
        assertTrue(freshDiff > 1e-3, "a fresh optimizer after the reset trains differently: " + freshDiff);
    }

    /**
     * Trains {@code STEPS} steps from {@code initial}; with a reset, commits after {@code RESET_AT} steps, trains two
     * more and fails mid-step, then goes back as {@link io.kolo.elastic.Elastic#run} does (restore, sync, a new
     * trainer for the next job) and trains to {@code STEPS}.
     */
    private static List<float[]> train(List<byte[]> initial, Reset reset) throws Exception {
        try (Model model = Model.newInstance("elastic-reset-" + reset)) {
            model.setBlock(mlp());
            model.getBlock().initialize(model.getNDManager(), model.getDataType(), new Shape(1, 5));
            ModelParameters.write(model.getBlock(), initial);
            DistributedSampler sampler = new DistributedSampler(0, 1, BATCH, true, 9, DistributedSampler.Tail.PAD);
            ArrayDataset train = data(model, sampler);
            IntFunction<TrainingConfig> config = size -> new DefaultTrainingConfig(Loss.softmaxCrossEntropyLoss())
                    .optOptimizer(KoloOptimizers.adam().optLearningRateTracker(
                            new ScaledLearningRate(Tracker.fixed(0.02f), size, 4)).build())
                    .optDevices(new Device[]{Device.cpu()});
            ElasticTrainerState state = new ElasticTrainerState(model, sampler, config);
            state.sync();
            DistributedTrainer trainer = state.newTrainer();
            try {
                Iterator<Batch> batches = trainer.iterateDataset(train).iterator();
                while (state.batch() < STEPS) {
                    backward(trainer, batches.next());
                    trainer.step();
                    state.batchDone();
                    if (state.batch() == RESET_AT && reset != Reset.NONE) {
                        state.commit();
                        for (int i = 0; i < 2; i++) {
                            backward(trainer, batches.next());
                            trainer.step();
                            state.batchDone();
                        }
                        backward(trainer, batches.next());
                        trainer.close();
                        state.restore();
                        state.sync();
                        trainer = reset == Reset.RESTORED ? state.newTrainer()
                                : new DistributedTrainer(model, config.apply(1), Kolo.communicator(),
                                DistributedOptions.defaults());
                        reset = Reset.NONE;
                        batches = trainer.iterateDataset(train).iterator();
                    }
                }
            } finally {
                trainer.close();
            }
            return parameters(model);
        }
    }

    @Test
    void djlsOwnOptimizerIsRefusedInOneLineNamingTheReplacement() {
        Kolo.init();
        try (Model model = Model.newInstance("elastic-djl-adam")) {
            model.setBlock(mlp());
            DistributedSampler sampler = new DistributedSampler(0, 1, BATCH, true, 9, DistributedSampler.Tail.PAD);
            ElasticTrainerState state = new ElasticTrainerState(model, sampler,
                    size -> new DefaultTrainingConfig(Loss.softmaxCrossEntropyLoss())
                            .optOptimizer(Optimizer.adam().build()).optDevices(new Device[]{Device.cpu()}),
                    new Shape(1, 5));
            state.sync();
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, state::newTrainer);
            assertEquals("ElasticTrainerState cannot commit the state of the training config's optimizer (Adam): "
                    + "DJL's optimizers keep it private, so a reset would lose it; build it with "
                    + "KoloOptimizers.adam(), which makes the same update with state a commit keeps", e.getMessage());
        }
    }

    @Test
    void aBlockWithoutParametersOrShapesIsRefusedClearly() {
        try (Model model = Model.newInstance("elastic-state-no-shapes")) {
            model.setBlock(mlp());
            DistributedSampler sampler = new DistributedSampler(0, 1, BATCH, true, 9, DistributedSampler.Tail.PAD);
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> new ElasticTrainerState(model, sampler, size -> null));
            assertEquals("the model's block is not initialised: pass its input shapes", e.getMessage());
        }
    }
}
