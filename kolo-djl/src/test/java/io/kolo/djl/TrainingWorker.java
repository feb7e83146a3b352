package io.kolo.djl;

import ai.djl.Model;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDList;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.Shape;
import ai.djl.nn.Activation;
import ai.djl.nn.SequentialBlock;
import ai.djl.nn.core.Linear;
import ai.djl.training.DefaultTrainingConfig;
import ai.djl.training.GradientCollector;
import ai.djl.training.loss.Loss;
import ai.djl.training.optimizer.Optimizer;
import ai.djl.training.tracker.Tracker;
import io.kolo.Kolo;

/**
 * One rank of a real multi-process training job: an MLP on random data, checking after every step that all
 * ranks hold bit-identical parameters. {@code die RANK STEP} makes that rank halt with code 3 mid-epoch.
 */
public final class TrainingWorker {
    private TrainingWorker() {
    }

    public static void main(String[] args) {
        int steps = Integer.parseInt(args[0]);
        int dieRank = args.length > 2 ? Integer.parseInt(args[1]) : -1;
        int dieStep = args.length > 2 ? Integer.parseInt(args[2]) : -1;
        Kolo.init();
        KoloDjl.configureEngine();
        try (Model model = Model.newInstance("worker")) {
            model.setBlock(new SequentialBlock()
                    .add(Linear.builder().setUnits(32).build())
                    .add(Activation::relu)
                    .add(Linear.builder().setUnits(4).build()));
            DefaultTrainingConfig config = new DefaultTrainingConfig(Loss.softmaxCrossEntropyLoss())
                    .optOptimizer(Optimizer.adam().optLearningRateTracker(Tracker.fixed(0.01f)).build())
                    .optDevices(new ai.djl.Device[]{KoloDjl.device()});
            try (DistributedTrainer trainer = new DistributedTrainer(model, config)) {
                trainer.initialize(new Shape(1, 10));
                trainer.checkParametersInSync();
                NDManager manager = model.getNDManager();
                manager.getEngine().setRandomSeed(Kolo.rank());
                for (int step = 0; step < steps; step++) {
                    if (Kolo.rank() == dieRank && step == dieStep) {
                        System.out.println("rank " + Kolo.rank() + " dies at step " + step);
                        System.out.flush();
                        Runtime.getRuntime().halt(3);
                    }
                    try (NDManager m = manager.newSubManager();
                         GradientCollector collector = trainer.newGradientCollector()) {
                        NDArray x = m.randomNormal(new Shape(16, 10));
                        NDArray y = m.randomInteger(0, 4, new Shape(16), ai.djl.ndarray.types.DataType.INT32);
                        NDArray loss = trainer.getLoss().evaluate(new NDList(y), trainer.forward(new NDList(x)));
                        collector.backward(loss);
                    }
                    trainer.step();
                    trainer.checkParametersInSync();
                }
                System.out.println("rank " + Kolo.rank() + " trained " + steps + " steps in sync, checksum "
                        + Long.toHexString(trainer.parameterChecksum()));
            }
        } catch (RuntimeException e) {
            System.out.println("rank " + Kolo.rank() + " failed: " + e);
            System.exit(1);
        } finally {
            Kolo.shutdown();
        }
    }
}
