package io.kolo.spark;

import ai.djl.Model;
import ai.djl.nn.Activation;
import ai.djl.nn.Block;
import ai.djl.nn.SequentialBlock;
import ai.djl.nn.core.Linear;
import ai.djl.training.DefaultTrainingConfig;
import ai.djl.training.loss.Loss;
import ai.djl.training.optimizer.Optimizer;
import ai.djl.training.tracker.Tracker;
import org.apache.spark.ml.feature.VectorAssembler;
import org.apache.spark.ml.linalg.Vector;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The estimator's options beyond MNIST's: features as a Spark ML {@code Vector} (VectorAssembler's output),
 * validation rows of their own marked by a boolean column, and checkpoints. Two ranks in {@code local[2]} (threads of
 * this JVM) on a small separable problem: the class is the side of a plane that a point of four coordinates lies on.
 */
class DjlEstimatorOptionsTest {
    private static SparkSession spark;

    @BeforeAll
    static void start() {
        spark = SparkClusters.local(2, Map.of());
    }

    @AfterAll
    static void stop() {
        if (spark != null) {
            spark.stop();
        }
    }

    static Block mlp() {
        return new SequentialBlock().add(Linear.builder().setUnits(16).build()).add(Activation::relu)
                .add(Linear.builder().setUnits(2).build());
    }

    static DefaultTrainingConfig adam(Tracker learningRate) {
        return new DefaultTrainingConfig(Loss.softmaxCrossEntropyLoss())
                .optOptimizer(Optimizer.adam().optLearningRateTracker(learningRate).build());
    }

    /** Else every rank fails in PyTorch's reshape, after the executors loaded it, and Spark retries the stage. */
    @Test
    void anInputShapeThatDoesNotHoldTheFeaturesFailsOnTheDriverNamingBoth() {
        StructType schema = new StructType().add("x", DataTypes.createArrayType(DataTypes.FloatType))
                .add("y", DataTypes.IntegerType);
        List<Row> rows = new ArrayList<>();
        for (int i = 0; i < 64; i++) {
            rows.add(RowFactory.create(new float[]{i, 1, 2, 3}, i % 2));
        }
        Dataset<Row> df = spark.createDataFrame(rows, schema);
        IllegalArgumentException e = org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
                () -> new DjlEstimator(DjlEstimatorOptionsTest::mlp, DjlEstimatorOptionsTest::adam).setFeaturesCol("x")
                        .setLabelCol("y").setInputShape(1, 28, 28).setNumProc(2).setBatchSize(4).setEpochs(1).fit(df));
        assertEquals("inputShape (1, 28, 28) holds 784 values but the rows of feature column 'x' have 4: give the"
                + " shape of one row's features", e.getMessage());
    }

    @Test
    void vectorFeaturesAndValidationRowsOfTheirOwnWhoseMetricsAreReported() {
        Dataset<Row> train = assembled(points(600, 1, false));
        // The validation rows' labels are the wrong side of the plane: a model that learnt the plane scores about
        // 1 - its accuracy on them, which only validation on these very rows (and not on training rows) reports.
        List<Row> flippedRows = points(200, 2, true);
        Dataset<Row> flipped = assembled(flippedRows);
        assertInstanceOf(Vector.class, train.first().getAs("features"), "VectorAssembler makes a Vector column");

        Dataset<Row> both = train.withColumn("check", functions.lit(false))
                .union(flipped.withColumn("check", functions.lit(true)));
        DjlModel model = new DjlEstimator(DjlEstimatorOptionsTest::mlp, DjlEstimatorOptionsTest::adam)
                .setFeaturesCol("features").setLabelCol("side").setNumProc(2).setBatchSize(16).setEpochs(4)
                .setLearningRate(0.02).setScaleLearningRate(false).setValidationCol("check")
                .fit(both);

        assertEquals(4, model.history().size(), model.history().toString());
        EpochMetrics last = model.history().getLast();
        assertTrue(last.trainLoss() < model.history().getFirst().trainLoss(), "training loss falls: " + model.history());
        List<float[]> features = new ArrayList<>();
        int agree = 0;
        for (Row r : flippedRows) {
            features.add(new float[]{(float) r.getDouble(1), (float) r.getDouble(2), (float) r.getDouble(3),
                    (float) r.getDouble(4)});
        }
        double[] predicted = model.predict(features);
        for (int i = 0; i < predicted.length; i++) {
            if ((int) predicted[i] == 1 - flippedRows.get(i).getInt(5)) {
                agree++;
            }
        }
        double trueAccuracy = agree / 200.0;
        assertTrue(trueAccuracy > 0.9, "the model learnt the plane: " + trueAccuracy + ", " + model.history());
        assertEquals(1 - trueAccuracy, last.validationAccuracy(), 0.02,
                "validation accuracy is measured on the validation frame: " + model.history());
        assertTrue(Double.isFinite(last.validationLoss()) && last.validationLoss() > last.trainLoss(),
                "validation loss on the wrong labels exceeds the training loss: " + last);

        List<Row> scored = model.transform(train.limit(50)).select("side", "prediction").collectAsList();
        assertEquals(50, scored.size());
        assertTrue(scored.stream().filter(r -> r.getInt(0) == (int) r.getDouble(1)).count() >= 45,
                "transform takes the Vector column too: " + scored);
    }

    @Test
    void rankZeroCheckpointsEveryEpochAndTheLastHoldsTheTrainedParameters(@TempDir Path dir) throws Exception {
        Path checkpoints = dir.resolve("ckpt");
        DjlModel model = new DjlEstimator(DjlEstimatorOptionsTest::mlp, DjlEstimatorOptionsTest::adam)
                .setFeaturesCol("features").setLabelCol("side").setNumProc(2).setBatchSize(16).setEpochs(2)
                .setLearningRate(0.02).setCheckpointDir(checkpoints.toString())
                .fit(assembled(points(400, 3, false)));

        List<String> files;
        try (Stream<Path> list = Files.list(checkpoints)) {
            files = list.map(p -> p.getFileName().toString()).sorted().toList();
        }
        assertEquals(List.of("kolo-spark-estimator-0001.params", "kolo-spark-estimator-0002.params"), files,
                "one file per epoch, from rank 0 alone");
        byte[] first = Files.readAllBytes(checkpoints.resolve(files.get(0)));
        byte[] last = Files.readAllBytes(checkpoints.resolve(files.get(1)));
        byte[] trained = model.parameters();
        // DJL's model file is a header and then the block's parameters in the format Block.saveParameters writes.
        assertArrayEquals(trained, Arrays.copyOfRange(last, last.length - trained.length, last.length),
                "the last checkpoint holds the parameters fit returned");
        assertFalse(Arrays.equals(trained, Arrays.copyOfRange(first, Math.max(0, first.length - trained.length),
                first.length)), "the first epoch's checkpoint holds earlier parameters");

        try (Model loaded = Model.newInstance("kolo-spark-estimator")) {
            loaded.setBlock(mlp());
            loaded.load(checkpoints);
            assertEquals("2", loaded.getProperty("Epoch"), "DJL loads the latest checkpoint, epoch 2");
        }
    }

    /**
     * {@code n} rows (id, x0..x3, side): points uniform in [-1, 1]^4, side 1 where x0 + x1 - x2 + 0.5 x3 > 0 (0 on the
     * other side; the reverse where {@code flip}).
     */
    private static List<Row> points(int n, long seed, boolean flip) {
        Random random = new Random(seed);
        List<Row> rows = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            double[] x = {random.nextDouble() * 2 - 1, random.nextDouble() * 2 - 1, random.nextDouble() * 2 - 1,
                    random.nextDouble() * 2 - 1};
            int side = x[0] + x[1] - x[2] + 0.5 * x[3] > 0 ? 1 : 0;
            rows.add(RowFactory.create(i, x[0], x[1], x[2], x[3], flip ? 1 - side : side));
        }
        return rows;
    }

    private static Dataset<Row> assembled(List<Row> rows) {
        StructType schema = new StructType().add("id", DataTypes.IntegerType).add("x0", DataTypes.DoubleType)
                .add("x1", DataTypes.DoubleType).add("x2", DataTypes.DoubleType).add("x3", DataTypes.DoubleType)
                .add("side", DataTypes.IntegerType);
        return new VectorAssembler().setInputCols(new String[]{"x0", "x1", "x2", "x3"}).setOutputCol("features")
                .transform(spark.createDataFrame(rows, schema));
    }
}
