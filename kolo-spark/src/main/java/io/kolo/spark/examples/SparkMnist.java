package io.kolo.spark.examples;

import ai.djl.ndarray.types.Shape;
import ai.djl.nn.Activation;
import ai.djl.nn.Block;
import ai.djl.nn.Blocks;
import ai.djl.nn.SequentialBlock;
import ai.djl.nn.convolutional.Conv2d;
import ai.djl.nn.core.Linear;
import ai.djl.nn.pooling.Pool;
import ai.djl.training.DefaultTrainingConfig;
import ai.djl.training.loss.Loss;
import ai.djl.training.optimizer.Optimizer;
import ai.djl.training.tracker.Tracker;
import io.kolo.spark.DjlEstimator;
import io.kolo.spark.DjlModel;
import io.kolo.spark.EpochMetrics;
import io.kolo.spark.KoloSpark;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * MNIST on Spark with {@link DjlEstimator}: the t10k images as a DataFrame (first 8,000 rows train, last 2,000 held
 * out), a small CNN trained on {@code --np} barrier tasks, scored with {@code DjlModel.transform}. Prints each epoch,
 * the held-out accuracy, epochs per second and the time from {@code fit} to the first training step.
 *
 * <pre>
 * spark-submit --class io.kolo.spark.examples.SparkMnist --jars ... kolo-spark.jar --data DIR --np 2
 * </pre>
 *
 * It lives here rather than in kolo-examples because that module is a Java module, and Spark's jars cannot be read as
 * modules.
 */
public final class SparkMnist {
    private static final String USAGE = "usage: SparkMnist --data DIR [--np N] [--epochs N] [--batch-size N]"
            + " [--lr RATE] [--master URL]";

    private SparkMnist() {
    }

    public static Block cnn() {
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

    public static DefaultTrainingConfig adam(Tracker learningRate) {
        return new DefaultTrainingConfig(Loss.softmaxCrossEntropyLoss())
                .optOptimizer(Optimizer.adam().optLearningRateTracker(learningRate).build());
    }

    public static void main(String[] args) throws Exception {
        Path data = null;
        int np = 2;
        int epochs = 3;
        int batchSize = 32;
        float lr = 0.001f;
        String master = null;
        try {
            for (int i = 0; i < args.length; i++) {
                switch (args[i]) {
                    case "--data" -> data = Path.of(args[++i]);
                    case "--np" -> np = Integer.parseInt(args[++i]);
                    case "--epochs" -> epochs = Integer.parseInt(args[++i]);
                    case "--batch-size" -> batchSize = Integer.parseInt(args[++i]);
                    case "--lr" -> lr = Float.parseFloat(args[++i]);
                    case "--master" -> master = args[++i];
                    default -> throw new IllegalArgumentException("unknown argument '" + args[i] + "'");
                }
            }
            if (data == null) {
                throw new IllegalArgumentException("--data is required");
            }
        } catch (RuntimeException e) {
            System.err.println("SparkMnist: " + e.getMessage() + " (" + USAGE + ")");
            System.exit(2);
        }
        float[][] images = MnistFiles.images(data.resolve(MnistFiles.TEST_IMAGES));
        int[] labels = MnistFiles.labels(data.resolve(MnistFiles.TEST_LABELS));
        SparkSession.Builder builder = SparkSession.builder().appName("kolo-spark-mnist");
        if (master != null) {
            builder.master(master);
        }
        SparkSession spark = builder.getOrCreate();
        try {
            // What a barrier stage and a Kolo job cost before any data or model: an empty job, twice (the first
            // also warms the executors up).
            for (int i = 1; i <= 2; i++) {
                long t = System.nanoTime();
                KoloSpark.run(spark, np, comm -> comm.rank());
                System.out.printf(Locale.ROOT, "SparkMnist: empty job of %d ranks #%d: %.2f s%n", np, i,
                        (System.nanoTime() - t) / 1e9);
            }
            Dataset<Row> train = frame(spark, images, labels, 0, 8000);
            Dataset<Row> test = frame(spark, images, labels, 8000, images.length);
            long start = System.nanoTime();
            DjlModel model = new DjlEstimator(SparkMnist::cnn, SparkMnist::adam)
                    .setFeaturesCol("pixels").setInputShape(1, 28, 28).setLabelCol("digit")
                    .setNumProc(np).setBatchSize(batchSize).setEpochs(epochs).setLearningRate(lr)
                    .fit(train);
            double fitSeconds = (System.nanoTime() - start) / 1e9;
            double trainSeconds = 0;
            for (EpochMetrics m : model.history()) {
                System.out.println("SparkMnist: " + m);
                trainSeconds += m.seconds();
            }
            long correct = model.transform(test).select("digit", "prediction").collectAsList().stream()
                    .filter(r -> r.getInt(0) == (int) r.getDouble(1)).count();
            System.out.printf(Locale.ROOT, "SparkMnist: np=%d, held-out accuracy %.2f%%, %.3f epochs/s (epochs alone),"
                            + " fit %.1f s, fit to first step %.1f s%n", np, 100.0 * correct / (images.length - 8000),
                    epochs / trainSeconds, fitSeconds, model.timeToFirstStep().toMillis() / 1e3);
        } finally {
            spark.stop();
        }
    }

    private static Dataset<Row> frame(SparkSession spark, float[][] images, int[] labels, int from, int to) {
        List<Row> rows = new ArrayList<>();
        for (int i = from; i < to; i++) {
            rows.add(RowFactory.create(i, images[i], labels[i]));
        }
        return spark.createDataFrame(rows, new StructType().add("id", DataTypes.IntegerType)
                .add("pixels", DataTypes.createArrayType(DataTypes.FloatType)).add("digit", DataTypes.IntegerType));
    }
}
