package io.kolo.spark;

import io.kolo.spark.examples.MnistFiles;
import io.kolo.spark.examples.SparkMnist;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * DjlEstimator on real MNIST (the t10k set from {@code shared/data/mnist} beside the checkout: first 8,000 images
 * train, last 2,000 held out) with two ranks on local-cluster, one executor JVM each.
 */
class DjlEstimatorTest {
    private static SparkSession spark;

    @BeforeAll
    static void start() {
        spark = SparkClusters.localCluster(2, 1, 2048, Map.of());
        SparkClusters.awaitSlots(spark, 2);
    }

    @AfterAll
    static void stop() {
        if (spark != null) {
            spark.stop();
        }
    }

    @Test
    void fitsMnistOnTwoRanksAbove95PercentAndTransformPredictsAsTheModelDoes() throws IOException {
        Path dir = mnistDir();
        assumeTrue(Files.exists(dir.resolve("t10k-images-idx3-ubyte.gz")),
                "skipped: no MNIST t10k files in " + dir + " (set -Dkolo.mnist=DIR)");
        float[][] images = MnistFiles.images(dir.resolve(MnistFiles.TEST_IMAGES));
        int[] labels = MnistFiles.labels(dir.resolve(MnistFiles.TEST_LABELS));
        Dataset<Row> train = frame(images, labels, 0, 8000);
        Dataset<Row> test = frame(images, labels, 8000, 10000);

        DjlModel model = new DjlEstimator(SparkMnist::cnn, SparkMnist::adam)
                .featureCol("pixels").inputShape(1, 28, 28).labelCol("digit")
                .numProc(2).batchSize(32).epochs(3).learningRate(0.001f).validationFraction(0.05)
                .fit(train);
        assertEquals(3, model.history().size());
        System.out.println(model.history());
        assertTrue(model.history().getLast().validationAccuracy() > 0.9, model.history().toString());
        assertTrue(model.timeToFirstStep().toMillis() > 0, "fit to first step: " + model.timeToFirstStep());

        List<Row> scored = model.transform(test).select("id", "digit", "prediction").orderBy("id").collectAsList();
        assertEquals(2000, scored.size());
        long correct = scored.stream().filter(r -> r.getInt(1) == (int) r.getDouble(2)).count();
        double accuracy = correct / 2000.0;
        System.out.println("held-out accuracy " + accuracy);
        assertTrue(accuracy >= 0.95, "held-out accuracy " + accuracy);

        List<float[]> first = new ArrayList<>();
        for (int i = 8000; i < 8200; i++) {
            first.add(images[i]);
        }
        double[] local = model.predict(first);
        for (int i = 0; i < local.length; i++) {
            assertEquals(local[i], scored.get(i).getDouble(2), "row " + (8000 + i));
        }
    }

    @Test
    void wrongColumnsFailBeforeAnyTaskStartsNamingTheColumnAndTheType() {
        Dataset<Row> df = spark.createDataFrame(List.of(RowFactory.create("seven", new float[]{1, 2}, 7)),
                new StructType().add("name", DataTypes.StringType)
                        .add("pixels", DataTypes.createArrayType(DataTypes.FloatType)).add("digit", DataTypes.IntegerType));
        DjlEstimator e = new DjlEstimator(SparkMnist::cnn, SparkMnist::adam).numProc(2);
        assertEquals("no column 'image' in the DataFrame (its columns: name, pixels, digit)",
                assertThrows(IllegalArgumentException.class, () -> e.featureCol("image").fit(df)).getMessage());
        assertEquals("feature column 'name' is string: expected " + FeatureColumns.FEATURES_EXPECTED,
                assertThrows(IllegalArgumentException.class, () -> e.featureCol("name").fit(df)).getMessage());
        assertEquals("label column 'name' is string: expected a numeric type (the class index for classification)",
                assertThrows(IllegalArgumentException.class, () -> e.featureCol("pixels").labelCol("name").fit(df))
                        .getMessage());
    }

    private static Dataset<Row> frame(float[][] images, int[] labels, int from, int to) {
        List<Row> rows = new ArrayList<>();
        for (int i = from; i < to; i++) {
            rows.add(RowFactory.create(i, images[i], labels[i]));
        }
        return spark.createDataFrame(rows, new StructType().add("id", DataTypes.IntegerType)
                .add("pixels", DataTypes.createArrayType(DataTypes.FloatType)).add("digit", DataTypes.IntegerType));
    }

    /** {@code -Dkolo.mnist=DIR}, {@code KOLO_MNIST}, or {@code shared/data/mnist} in a directory above this one. */
    static Path mnistDir() {
        String configured = System.getProperty("kolo.mnist", System.getenv("KOLO_MNIST"));
        if (configured != null) {
            return Path.of(configured);
        }
        for (Path p = Path.of("").toAbsolutePath(); p != null; p = p.getParent()) {
            if (Files.isDirectory(p.resolve("shared/data/mnist"))) {
                return p.resolve("shared/data/mnist");
            }
        }
        return Path.of("../shared/data/mnist");
    }
}
