package io.kolo.examples;

import ai.djl.Device;
import ai.djl.Model;
import ai.djl.engine.Engine;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.Shape;
import ai.djl.training.DefaultTrainingConfig;
import ai.djl.training.TrainingConfig;
import ai.djl.training.dataset.ArrayDataset;
import ai.djl.training.dataset.Batch;
import ai.djl.training.loss.Loss;
import ai.djl.training.tracker.Tracker;
import io.kolo.Kolo;
import io.kolo.djl.DistributedSampler;
import io.kolo.djl.DistributedTrainer;
import io.kolo.djl.ElasticTrainerState;
import io.kolo.djl.KoloDjl;
import io.kolo.djl.KoloOptimizers;
import io.kolo.djl.ScaledLearningRate;
import io.kolo.elastic.Elastic;

import java.util.Locale;
import java.util.function.IntFunction;

/**
 * {@code mnist --elastic}: the same training as {@link MnistExample}, surviving workers that die and a job that
 * grows or shrinks ({@code kolo run -np 3 --min-np 2 ... --example mnist -- --data DIR --elastic}). The model and the
 * position in the data are committed every {@code --commit-every} batches and at each epoch's end; after a reset
 * training goes on from the last commit with the new number of ranks.
 */
final class ElasticMnist {
    private ElasticMnist() {
    }

    static void run(MnistData mnist, String modelName, int epochs, int batchSize, float lr, int warmup, long seed,
                    int commitEvery, boolean logSteps) throws Exception {
        boolean cnn = modelName.equals("cnn");
        Shape sample = cnn ? new Shape(1, 28, 28) : new Shape(784);
        log("mnist: " + modelName + ", elastic, starting on " + Kolo.size() + " rank(s), batch " + batchSize
                + " per rank, commit every " + commitEvery + " batches, " + mnist.description());
        // The same initial parameters in every run of the same --seed (sync() gives every rank rank 0's), so a run
        // with a reset can be compared with one without.
        Engine.getInstance().setRandomSeed((int) seed);
        try (Model model = Model.newInstance("mnist-" + modelName)) {
            model.setBlock(cnn ? MnistExample.cnn() : MnistExample.mlp());
            NDManager manager = model.getNDManager();
            DistributedSampler sampler = new DistributedSampler(batchSize, true, seed);
            ArrayDataset train = new ArrayDataset.Builder()
                    .setData(MnistExample.images(manager, mnist.trainImages(), sample))
                    .optLabels(manager.create(mnist.trainLabels()))
                    .setSampling(sampler)
                    .build();
            // Made for each job: the rate scaled to that job's size; the state puts the committed Adam moments and
            // update counts into the new optimizer.
            IntFunction<TrainingConfig> config = size -> new DefaultTrainingConfig(Loss.softmaxCrossEntropyLoss())
                    .optOptimizer(KoloOptimizers.adam()
                            .optLearningRateTracker(new ScaledLearningRate(Tracker.fixed(lr), size, warmup))
                            .build())
                    .optDevices(new Device[]{KoloDjl.device()});
            ElasticTrainerState state = new ElasticTrainerState(model, sampler, config, new Shape(1).addAll(sample));
            EpochLoss loss = new EpochLoss();
            double accuracy = Elastic.run(state, s -> train(s, loss, train, manager, mnist, sample, epochs,
                    commitEvery, logSteps));
            log(String.format(Locale.ROOT, "final test accuracy %.2f%%", 100 * accuracy));
        }
    }

    /**
     * This process's loss over the batches it trained in the current epoch, kept across resets: a job that starts
     * after a reset near an epoch's end may have no batch of it left, and its epoch line still gives the epoch's loss.
     */
    private static final class EpochLoss {
        int epoch = -1;
        double sum;
        long batches;

        void startEpoch(int e) {
            if (epoch != e) {
                epoch = e;
                sum = 0;
                batches = 0;
            }
        }
    }

    /** One job's share of the training: from the committed position to the end, or until the job fails. */
    private static double train(ElasticTrainerState s, EpochLoss epochLoss, ArrayDataset train, NDManager manager,
                                MnistData mnist, Shape sample, int epochs, int commitEvery, boolean logSteps)
            throws Exception {
        try (DistributedTrainer trainer = s.newTrainer()) {
            log("training on " + Kolo.size() + " ranks from epoch " + (s.epoch() + 1) + ", batch " + s.batch()
                    + " (" + s.consumed() + " samples of the epoch already trained)");
            double accuracy = Double.NaN;
            while (s.epoch() < epochs) {
                long start = System.nanoTime();
                epochLoss.startEpoch(s.epoch());
                for (Batch batch : trainer.iterateDataset(train)) {
                    epochLoss.sum += MnistExample.trainStep(trainer, batch);
                    epochLoss.batches++;
                    s.batchDone();
                    if (logSteps) {
                        // Lets an observer (the chaos benchmark) count the steps a failure rolls back.
                        log("epoch " + (s.epoch() + 1) + ", batch " + s.batch() + ": trained on " + Kolo.size()
                                + " ranks");
                    }
                    if (s.batch() % commitEvery == 0) {
                        s.commit();
                        log("epoch " + (s.epoch() + 1) + ", batch " + s.batch() + ": committed on " + Kolo.size()
                                + " ranks");
                    }
                }
                int epoch = s.epoch() + 1;
                s.epochDone();
                // The mean over the batches every rank of this job trained in the epoch, before a reset too.
                double[] loss = trainer.averageAcrossRanks("loss", epochLoss.sum, epochLoss.batches);
                accuracy = MnistExample.testAccuracy(trainer, manager, mnist, sample);
                log(String.format(Locale.ROOT, "epoch %d: loss %.3f, test accuracy %.2f%% (%.1f s, %d ranks)", epoch,
                        loss[1] > 0 ? loss[0] / loss[1] : Double.NaN, 100 * accuracy,
                        (System.nanoTime() - start) / 1e9, Kolo.size()));
                s.commit();
            }
            if (Double.isNaN(accuracy)) {
                accuracy = MnistExample.testAccuracy(trainer, manager, mnist, sample);
            }
            trainer.checkParametersInSync();
            log(String.format(Locale.ROOT, "parameters identical on all %d ranks (checksum %016x)", Kolo.size(),
                    trainer.parameterChecksum()));
            return accuracy;
        }
    }

    private static void log(String line) {
        if (Kolo.rank() == 0) {
            System.out.println(line);
            System.out.flush();
        }
    }
}
