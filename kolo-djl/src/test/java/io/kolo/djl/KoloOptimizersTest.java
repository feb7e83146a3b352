package io.kolo.djl;

import ai.djl.Device;
import ai.djl.Model;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDList;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.Shape;
import ai.djl.nn.Activation;
import ai.djl.nn.Parameter;
import ai.djl.nn.SequentialBlock;
import ai.djl.nn.core.Linear;
import ai.djl.training.DefaultTrainingConfig;
import ai.djl.training.GradientCollector;
import ai.djl.training.Trainer;
import ai.djl.training.loss.Loss;
import ai.djl.training.optimizer.Optimizer;
import ai.djl.training.tracker.Tracker;
import ai.djl.util.Pair;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.function.Supplier;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link KoloOptimizers} against DJL's optimizers with real PyTorch: the same model from the same initial parameters,
 * trained on the same batches, one with DJL's optimizer and one with Kolo's, ends with the same parameters bit for
 * bit (the same learning rates, bias correction, weight decay, clipping and kernel), so a loop loses nothing by
 * switching.
 */
@Timeout(120)
class KoloOptimizersTest {
    private static final int STEPS = 15;

    @BeforeAll
    static void engine() {
        KoloDjl.configureEngine(1);
    }

    @Test
    void adamMatchesDjlsAdamWithAWarmUpWeightDecayAndClipping() {
        // The rate changes every update during the warm-up, so a wrong update count would show.
        Supplier<Tracker> rate = () -> new ScaledLearningRate(Tracker.fixed(0.01f), 4, 10);
        assertSameTraining(
                () -> Optimizer.adam().optLearningRateTracker(rate.get()).optWeightDecays(0.001f).optClipGrad(0.5f)
                        .build(),
                () -> KoloOptimizers.adam().optLearningRateTracker(rate.get()).optWeightDecays(0.001f)
                        .optClipGrad(0.5f).build());
    }

    @Test
    void adamMatchesDjlsAdamWithItsDefaultsAndOtherBetas() {
        assertSameTraining(() -> Optimizer.adam().build(), () -> KoloOptimizers.adam().build());
        assertSameTraining(() -> Optimizer.adam().optBeta1(0.8f).optBeta2(0.99f).optEpsilon(1e-6f)
                        .optBeginNumUpdate(3).build(),
                () -> KoloOptimizers.adam().optBeta1(0.8f).optBeta2(0.99f).optEpsilon(1e-6f).optBeginNumUpdate(3)
                        .build());
    }

    @Test
    void adamWMatchesDjlsAdamW() {
        assertSameTraining(() -> Optimizer.adamW().optLearningRateTracker(Tracker.fixed(0.01f)).build(),
                () -> KoloOptimizers.adamW().optLearningRateTracker(Tracker.fixed(0.01f)).build());
    }

    @Test
    void sgdMatchesDjlsSgdWithAndWithoutMomentum() {
        Supplier<Tracker> rate = () -> Tracker.factor().setBaseValue(0.1f).setFactor(0.9f).build();
        assertSameTraining(() -> Optimizer.sgd().setLearningRateTracker(rate.get()).optMomentum(0.9f).build(),
                () -> KoloOptimizers.sgd().setLearningRateTracker(rate.get()).optMomentum(0.9f).build());
        assertSameTraining(() -> Optimizer.sgd().setLearningRateTracker(Tracker.fixed(0.1f)).optWeightDecays(0.01f)
                        .build(),
                () -> KoloOptimizers.sgd().setLearningRateTracker(Tracker.fixed(0.1f)).optWeightDecays(0.01f)
                        .build());
    }

    @Test
    void sgdWithoutALearningRateSaysWhatToSet() {
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> KoloOptimizers.sgd().build());
        assertEquals("KoloOptimizers.sgd() needs a learning rate: call setLearningRateTracker(Tracker.fixed(0.1f)), "
                + "say, before build()", e.getMessage());
    }

    private static void assertSameTraining(Supplier<Optimizer> djl, Supplier<Optimizer> kolo) {
        List<float[]> initial;
        List<float[]> byDjl;
        try (Model model = Model.newInstance("djl-optimizer")) {
            model.setBlock(mlp());
            model.getBlock().initialize(model.getNDManager(), model.getDataType(), new Shape(1, 5));
            initial = parameters(model);
            byDjl = train(model, djl.get());
        }
        List<float[]> byKolo;
        try (Model model = Model.newInstance("kolo-optimizer")) {
            model.setBlock(mlp());
            model.getBlock().initialize(model.getNDManager(), model.getDataType(), new Shape(1, 5));
            ModelParameters.write(model.getBlock(), bytes(initial));
            byKolo = train(model, kolo.get());
        }
        boolean moved = false;
        for (int i = 0; i < byDjl.size(); i++) {
            assertArrayEquals(byDjl.get(i), byKolo.get(i), "parameter " + i + " after " + STEPS + " steps");
            moved |= !java.util.Arrays.equals(initial.get(i), byDjl.get(i));
        }
        assertTrue(moved, "training moved the parameters");
    }

    private static List<float[]> train(Model model, Optimizer optimizer) {
        DefaultTrainingConfig config = new DefaultTrainingConfig(Loss.softmaxCrossEntropyLoss())
                .optOptimizer(optimizer).optDevices(new Device[]{Device.cpu()});
        Random random = new Random(11);
        try (Trainer trainer = model.newTrainer(config)) {
            NDManager manager = trainer.getManager();
            for (int step = 0; step < STEPS; step++) {
                float[] x = new float[8 * 5];
                float[] y = new float[8];
                for (int i = 0; i < x.length; i++) {
                    x[i] = (float) random.nextGaussian() * 3;
                }
                for (int i = 0; i < y.length; i++) {
                    y[i] = random.nextInt(3);
                }
                try (NDManager batch = manager.newSubManager()) {
                    NDList data = new NDList(batch.create(x, new Shape(8, 5)));
                    NDList labels = new NDList(batch.create(y));
                    try (GradientCollector gc = trainer.newGradientCollector()) {
                        NDList out = trainer.forward(data, labels);
                        gc.backward(trainer.getLoss().evaluate(labels, out));
                    }
                    trainer.step();
                }
            }
        }
        return parameters(model);
    }

    static SequentialBlock mlp() {
        return new SequentialBlock().add(Linear.builder().setUnits(8).build()).add(Activation::relu)
                .add(Linear.builder().setUnits(3).build());
    }

    static List<float[]> parameters(Model model) {
        List<float[]> out = new ArrayList<>();
        for (Pair<String, Parameter> p : model.getBlock().getParameters()) {
            NDArray array = p.getValue().getArray();
            out.add(array.toFloatArray());
        }
        return out;
    }

    private static List<byte[]> bytes(List<float[]> values) {
        List<byte[]> out = new ArrayList<>();
        for (float[] v : values) {
            java.nio.ByteBuffer b = java.nio.ByteBuffer.allocate(v.length * 4).order(java.nio.ByteOrder.nativeOrder());
            b.asFloatBuffer().put(v);
            out.add(b.array());
        }
        return out;
    }
}
