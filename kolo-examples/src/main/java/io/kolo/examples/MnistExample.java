package io.kolo.examples;

import ai.djl.Device;
import ai.djl.Model;
import ai.djl.engine.Engine;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDList;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.Shape;
import ai.djl.nn.Activation;
import ai.djl.nn.Block;
import ai.djl.nn.Blocks;
import ai.djl.nn.SequentialBlock;
import ai.djl.nn.convolutional.Conv2d;
import ai.djl.nn.core.Linear;
import ai.djl.nn.pooling.Pool;
import ai.djl.training.DefaultTrainingConfig;
import ai.djl.training.GradientCollector;
import ai.djl.training.dataset.ArrayDataset;
import ai.djl.training.dataset.Batch;
import ai.djl.training.loss.Loss;
import ai.djl.training.optimizer.Optimizer;
import ai.djl.training.tracker.Tracker;
import io.kolo.Kolo;
import io.kolo.djl.DistributedSampler;
import io.kolo.djl.DistributedTrainer;
import io.kolo.djl.KoloDjl;
import io.kolo.djl.RankZero;
import io.kolo.djl.ScaledLearningRate;
import io.kolo.elastic.WorkerRemovedException;

import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.nio.FloatBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;

/**
 * Data-parallel MNIST with DJL: an MLP or a small CNN, trained on every rank's shard, evaluated on the
 * held-out images, figures averaged over the ranks and printed by rank 0. Run it with
 * {@code ./kolo run -np 2 --example mnist -- --data DIR}; with {@code --elastic} it survives lost workers under
 * {@code kolo run --min-np} ({@link ElasticMnist}).
 */
public final class MnistExample {
    /** One step: forward, loss, backward (the gradient averaging happens in step()), update; returns the loss. */
    static float trainStep(DistributedTrainer trainer, Batch batch) {
        float value;
        try (batch; GradientCollector collector = trainer.newGradientCollector()) {
            NDList predictions = trainer.forward(batch.getData(), batch.getLabels());
            NDArray loss = trainer.getLoss().evaluate(batch.getLabels(), predictions);
            collector.backward(loss);
            value = loss.getFloat();
        }
        trainer.step();
        return value;
    }

    private static final String USAGE = "usage: mnist [--data DIR] [--model cnn|mlp] [--epochs N] [--batch-size N]"
            + " [--lr RATE] [--warmup-steps N] [--threads N] [--seed N] [--checkpoint DIR]"
            + " [--elastic [--commit-every N] [--log-steps]]";

    private MnistExample() {
    }

    @Command(name = "mnist")
    static final class Options {
        @Option(names = "--data")
        Path data;
        @Option(names = "--model")
        String model = "cnn";
        @Option(names = "--epochs", converter = ExampleArgs.Positive.class)
        int epochs = 3;
        @Option(names = "--batch-size", converter = ExampleArgs.Positive.class)
        int batchSize = 32;
        @Option(names = "--lr", converter = ExampleArgs.PositiveNumber.class)
        float lr = 0.001f;
        @Option(names = "--warmup-steps", converter = ExampleArgs.NonNegative.class)
        int warmup = 100;
        @Option(names = "--threads", converter = ExampleArgs.Positive.class)
        Integer threads;
        @Option(names = "--seed", converter = ExampleArgs.Whole.class)
        long seed = 42;
        @Option(names = "--checkpoint")
        Path checkpoint;
        @Option(names = "--elastic")
        boolean elastic;
        @Option(names = "--commit-every", converter = ExampleArgs.Positive.class)
        Integer commitEvery;
        @Option(names = "--log-steps")
        boolean logSteps;
        @Option(names = {"-h", "--help"}, usageHelp = true)
        boolean help;
    }

    public static void main(String[] args) throws Exception {
        Options o = new Options();
        try {
            if (ExampleArgs.parse(o, args)) {
                System.out.println(USAGE);
                return;
            }
            if (!o.model.equals("cnn") && !o.model.equals("mlp")) {
                throw new IllegalArgumentException("--model must be cnn or mlp, not '" + o.model + "'");
            }
            if (o.elastic && o.data == null) {
                // Fetching waits for every rank at a barrier, which a worker started after a reset would never meet.
                throw new IllegalArgumentException("--elastic needs --data DIR");
            }
            if (!o.elastic && o.commitEvery != null) {
                throw new IllegalArgumentException("--commit-every is for --elastic");
            }
            if (!o.elastic && o.logSteps) {
                throw new IllegalArgumentException("--log-steps is for --elastic");
            }
            if (o.elastic && o.checkpoint != null) {
                throw new IllegalArgumentException("--elastic keeps its state in memory: drop --checkpoint");
            }
        } catch (IllegalArgumentException e) {
            System.err.println("mnist: " + e.getMessage() + " (" + USAGE + ")");
            System.exit(2);
        }
        Path data = o.data;
        String modelName = o.model;
        int epochs = o.epochs;
        int batchSize = o.batchSize;
        float lr = o.lr;
        int warmup = o.warmup;
        Integer threads = o.threads;
        long seed = o.seed;
        Path checkpoint = o.checkpoint;
        boolean elastic = o.elastic;
        Integer commitEvery = o.commitEvery;
        boolean logSteps = o.logSteps;

        // The four changes, 1 and 2: join the job, one rank's share of the machine for PyTorch.
        Kolo.init();
        if (threads != null) {
            KoloDjl.configureEngine(threads);
        } else {
            KoloDjl.configureEngine();
        }
        try {
            if (checkpoint != null && Kolo.rank() == 0) {
                // Rank 0 writes the checkpoints: a directory it cannot write fails now, not after an epoch of training.
                try {
                    Writable.directory(checkpoint);
                } catch (IllegalArgumentException e) {
                    throw new IllegalArgumentException("--checkpoint " + checkpoint + ": rank 0 cannot write there: "
                            + e.getMessage());
                }
            }
            MnistData mnist = loadOrFetch(data);
            if (elastic) {
                ElasticMnist.run(mnist, modelName, epochs, batchSize, lr, warmup, seed,
                        commitEvery == null ? 10 : commitEvery, logSteps);
            } else {
                run(mnist, modelName, epochs, batchSize, lr, warmup, seed, checkpoint);
            }
        } catch (WorkerRemovedException e) {
            // The launcher's new job has no place for this worker: its part is over, not a failure.
            System.err.println("mnist: " + e.getMessage());
        } catch (IllegalArgumentException e) {
            System.err.println("mnist: " + e.getMessage());
            System.exit(2);
        } finally {
            Kolo.shutdown();
        }
    }

    private static void run(MnistData mnist, String modelName, int epochs, int batchSize, float lr, int warmup,
                            long seed, Path checkpoint) throws Exception {
        RankZero rankZero = new RankZero(Kolo.communicator());
        rankZero.log("mnist: " + modelName + " on " + Kolo.size() + " rank(s), batch " + batchSize + " per rank, "
                + mnist.description());
        // The same initial parameters in every run of the same --seed (rank 0's are broadcast to the others).
        Engine.getInstance().setRandomSeed((int) seed);
        boolean cnn = modelName.equals("cnn");
        Shape sample = cnn ? new Shape(1, 28, 28) : new Shape(784);
        try (Model model = Model.newInstance("mnist-" + modelName)) {
            model.setBlock(cnn ? cnn() : mlp());
            // Bigger global batch, proportionally bigger rate, reached gradually.
            Optimizer adam = Optimizer.adam()
                    .optLearningRateTracker(new ScaledLearningRate(Tracker.fixed(lr), Kolo.size(), warmup))
                    .build();
            DefaultTrainingConfig config = new DefaultTrainingConfig(Loss.softmaxCrossEntropyLoss())
                    .optOptimizer(adam)
                    .optDevices(new Device[]{KoloDjl.device()});
            NDManager manager = model.getNDManager();
            DistributedSampler sampler = new DistributedSampler(batchSize, true, seed);
            ArrayDataset train = new ArrayDataset.Builder()
                    .setData(images(manager, mnist.trainImages(), sample))
                    .optLabels(manager.create(mnist.trainLabels()))
                    .setSampling(sampler)
                    .build();
            // The four changes, 3 and 4: the distributed trainer, which broadcasts rank 0's initial parameters.
            try (DistributedTrainer trainer = new DistributedTrainer(model, config)) {
                trainer.initialize(new Shape(1).addAll(sample));
                double accuracy = 0;
                // Each rank's share of an epoch (the sampler pads the last), for the job view's progress.
                long perEpoch = Math.ceilDiv(Math.ceilDiv(mnist.trainLabels().length, Kolo.size()), batchSize);
                for (int epoch = 1; epoch <= epochs; epoch++) {
                    long start = System.nanoTime();
                    double lossSum = 0;
                    int batches = 0;
                    for (Batch batch : trainer.iterateDataset(train)) {
                        lossSum += trainStep(trainer, batch);
                        batches++;
                        Kolo.report("progress", Math.min(1.0, (epoch - 1 + batches / (double) perEpoch) / epochs));
                    }
                    double loss = trainer.averageAcrossRanks("loss", lossSum / batches)[0];
                    accuracy = testAccuracy(trainer, manager, mnist, sample);
                    rankZero.log(String.format(Locale.ROOT, "epoch %d: loss %.3f, test accuracy %.2f%% (%.1f s)",
                            epoch, loss, 100 * accuracy, (System.nanoTime() - start) / 1e9));
                    if (checkpoint != null) {
                        rankZero.saveCheckpoint(model, checkpoint, epoch);
                    }
                }
                trainer.checkParametersInSync();
                rankZero.log(String.format(Locale.ROOT, "final test accuracy %.2f%%", 100 * accuracy));
            }
        }
    }

    /** Each rank scores its share of the held-out images; the counts are summed over the ranks. */
    static double testAccuracy(DistributedTrainer trainer, NDManager parent, MnistData mnist, Shape sample) {
        int rank = Kolo.rank();
        int size = Kolo.size();
        float[][] images = mnist.testImages();
        float[] labels = mnist.testLabels();
        long correct = 0;
        long total = 0;
        int chunk = 500;
        for (int from = rank * chunk; from < images.length; from += size * chunk) {
            int to = Math.min(images.length, from + chunk);
            try (NDManager m = parent.newSubManager()) {
                NDArray x = images(m, java.util.Arrays.copyOfRange(images, from, to), sample);
                NDArray predicted = trainer.evaluate(new NDList(x)).singletonOrThrow().argMax(1);
                NDArray truth = m.create(java.util.Arrays.copyOfRange(labels, from, to)).toType(predicted.getDataType(), false);
                correct += predicted.eq(truth).countNonzero().getLong();
                total += to - from;
            }
        }
        long[] counts = trainer.sumAcrossRanks("test-accuracy", correct, total);
        return (double) counts[0] / counts[1];
    }

    static NDArray images(NDManager manager, float[][] images, Shape sample) {
        int pixels = 784;
        FloatBuffer flat = FloatBuffer.allocate(images.length * pixels);
        for (float[] image : images) {
            flat.put(image);
        }
        flat.flip();
        return manager.create(flat, new Shape(images.length).addAll(sample));
    }

    static Block mlp() {
        return new SequentialBlock()
                .add(Blocks.batchFlattenBlock(784))
                .add(Linear.builder().setUnits(128).build())
                .add(Activation::relu)
                .add(Linear.builder().setUnits(64).build())
                .add(Activation::relu)
                .add(Linear.builder().setUnits(10).build());
    }

    static Block cnn() {
        return new SequentialBlock()
                .add(Conv2d.builder().setKernelShape(new Shape(5, 5)).setFilters(8).build())
                .add(Activation::relu)
                .add(Pool.maxPool2dBlock(new Shape(2, 2), new Shape(2, 2)))
                .add(Conv2d.builder().setKernelShape(new Shape(5, 5)).setFilters(16).build())
                .add(Activation::relu)
                .add(Pool.maxPool2dBlock(new Shape(2, 2), new Shape(2, 2)))
                .add(Blocks.batchFlattenBlock())
                .add(Linear.builder().setUnits(64).build())
                .add(Activation::relu)
                .add(Linear.builder().setUnits(10).build());
    }

    /**
     * {@code --data DIR}, or {@code ~/.kolo/data/mnist}, fetched there (by local rank 0) when it is missing and
     * the network allows.
     */
    private static MnistData loadOrFetch(Path data) throws Exception {
        if (data != null) {
            return MnistData.load(data);
        }
        Path dir = Path.of(System.getProperty("user.home"), ".kolo", "data", "mnist");
        String failure = "";
        if (Kolo.localRank() == 0 && !Files.exists(dir.resolve(MnistData.TEST_IMAGES))) {
            try {
                System.out.println("mnist: fetching MNIST into " + dir + " from " + MnistData.MIRROR);
                MnistData.download(dir);
            } catch (java.io.IOException e) {
                failure = e.toString();
            }
        }
        Kolo.barrier();
        if (!Files.exists(dir.resolve(MnistData.TEST_IMAGES))) {
            throw new IllegalArgumentException("no MNIST in " + dir + (failure.isEmpty() ? "" : " and fetching it failed ("
                    + failure + ")") + ": put " + MnistData.TRAIN_IMAGES + ", " + MnistData.TRAIN_LABELS + ", "
                    + MnistData.TEST_IMAGES + " and " + MnistData.TEST_LABELS + " from " + MnistData.MIRROR
                    + " there, or pass --data DIR");
        }
        return MnistData.load(dir);
    }
}
