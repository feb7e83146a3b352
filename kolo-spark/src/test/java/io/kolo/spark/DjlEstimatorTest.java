package io.kolo.spark;

import io.kolo.spark.examples.MnistFiles;
import io.kolo.spark.examples.SparkMnist;
import io.kolo.spark.examples.SparkMnistPipeline;
import org.apache.spark.ml.Pipeline;
import org.apache.spark.ml.PipelineModel;
import org.apache.spark.ml.PipelineStage;
import org.apache.spark.ml.evaluation.MulticlassClassificationEvaluator;
import org.apache.spark.ml.feature.VectorAssembler;
import org.apache.spark.ml.param.ParamMap;
import org.apache.spark.ml.tuning.CrossValidator;
import org.apache.spark.ml.tuning.CrossValidatorModel;
import org.apache.spark.ml.tuning.ParamGridBuilder;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * DjlEstimator as a Spark ML stage on real MNIST (the t10k set from {@code shared/data/mnist} beside the checkout:
 * first 8,000 images train, last 2,000 held out) with two ranks on local-cluster, one executor JVM each. The images
 * come as a user's table would: a label and 784 numeric pixel columns, which a {@code VectorAssembler} turns into the
 * features vector.
 */
class DjlEstimatorTest {
    private static float[][] images;
    private static int[] labels;
    private SparkSession spark;

    @BeforeAll
    static void readMnist() throws IOException {
        Path dir = mnistDir();
        assumeTrue(Files.exists(dir.resolve(MnistFiles.TEST_IMAGES)),
                "skipped: no MNIST t10k files in " + dir + " (set -Dkolo.mnist=DIR)");
        images = MnistFiles.images(dir.resolve(MnistFiles.TEST_IMAGES));
        labels = MnistFiles.labels(dir.resolve(MnistFiles.TEST_LABELS));
    }

    @AfterEach
    void stop() {
        if (spark != null) {
            spark.stop();
        }
    }

    @Test
    void pipelineFitsMnistAbove95PercentAndPredictsTheSameLabelsWhenLoadedInANewSession(@TempDir Path dir)
            throws IOException {
        spark = cluster(2);
        Pipeline pipeline = new Pipeline().setStages(new PipelineStage[]{assembler(), new DjlEstimator(
                SparkMnist::cnn, SparkMnist::adam)
                .setInputShape(1, 28, 28).setLabelCol("digit")
                .setNumProc(2).setBatchSize(32).setEpochs(3).setLearningRate(0.001).setValidationFraction(0.05)});
        PipelineModel fitted = pipeline.fit(frame(0, 8000));

        DjlModel model = assertInstanceOf(DjlModel.class, fitted.stages()[1]);
        assertEquals(3, model.history().size());
        System.out.println(model.history());
        assertTrue(model.history().getLast().validationAccuracy() > 0.9, model.history().toString());
        assertTrue(model.timeToFirstStep().toMillis() > 0, "fit to first step: " + model.timeToFirstStep());
        assertEquals(pipeline.getStages()[1].uid(), model.uid(), "the model keeps its estimator's uid");

        double[] predicted = predictions(fitted, frame(8000, 10000));
        long correct = 0;
        for (int i = 0; i < predicted.length; i++) {
            correct += labels[8000 + i] == (int) predicted[i] ? 1 : 0;
        }
        double accuracy = correct / 2000.0;
        System.out.println("held-out accuracy " + accuracy);
        assertTrue(accuracy >= 0.95, "held-out accuracy " + accuracy);

        double[] onDriver = model.predict(Arrays.asList(images).subList(8000, 8200));
        assertArrayEquals(onDriver, Arrays.copyOf(predicted, 200),
                "transform predicts as the model does on the driver");

        String saved = dir.resolve("mnist-pipeline-model").toString();
        fitted.write().save(saved);
        String savedPipeline = dir.resolve("mnist-pipeline").toString();
        pipeline.write().save(savedPipeline);
        spark.stop();

        spark = cluster(1);
        PipelineModel loaded = PipelineModel.load(saved);
        assertNotSame(fitted, loaded);
        DjlModel loadedModel = assertInstanceOf(DjlModel.class, loaded.stages()[1]);
        assertEquals(model.uid(), loadedModel.uid());
        assertEquals(model.history(), loadedModel.history());
        assertArrayEquals(predicted, predictions(loaded, frame(8000, 10000)),
                "the model loaded in a new session predicts the same labels");

        DjlEstimator estimator = assertInstanceOf(DjlEstimator.class, Pipeline.load(savedPipeline).getStages()[1]);
        assertEquals(pipeline.getStages()[1].uid(), estimator.uid());
        assertArrayEquals(new int[]{1, 28, 28}, estimator.getInputShape());
        assertEquals(0.05, estimator.getValidationFraction());
        assertEquals("digit", estimator.getLabelCol());
    }

    @Test
    void crossValidatorOverTwoLearningRatesFitsEachAndKeepsTheBetter() {
        spark = cluster(2);
        DjlEstimator djl = new DjlEstimator(SparkMnist::cnn, SparkMnist::adam)
                .setInputShape(1, 28, 28).setLabelCol("digit").setNumProc(2).setBatchSize(16).setEpochs(1);
        // Adam at a rate of 1 diverges: the grid's two points must give different models, so the rates reach them.
        ParamMap[] grid = new ParamGridBuilder().addGrid(djl.learningRate(), new double[]{0.001, 1.0}).build();
        CrossValidator cv = new CrossValidator().setEstimator(djl).setEstimatorParamMaps(grid)
                .setEvaluator(new MulticlassClassificationEvaluator().setLabelCol("digit").setMetricName("accuracy"))
                .setNumFolds(2).setSeed(7);
        // Assembled once: the folds' fits then read a Vector column rather than 784 columns each.
        CrossValidatorModel best = cv.fit(assembler().transform(frame(0, 3000)).select("features", "digit").cache());

        double[] accuracy = best.avgMetrics();
        System.out.println("cross-validated accuracy per learning rate " + Arrays.toString(accuracy));
        assertEquals(2, accuracy.length);
        assertTrue(accuracy[0] > 0.5 && accuracy[0] > accuracy[1] + 0.2,
                "rate 0.001 learns, rate 1 does not: " + Arrays.toString(accuracy));
        DjlModel model = assertInstanceOf(DjlModel.class, best.bestModel());
        assertEquals(0.001, ((DjlEstimator) model.parent()).getLearningRate(), "the better rate was refit");
    }

    private static SparkSession cluster(int workers) {
        SparkSession s = SparkClusters.localCluster(workers, 1, 2048, Map.of());
        SparkClusters.awaitSlots(s, workers);
        return s;
    }

    private static VectorAssembler assembler() {
        return new VectorAssembler().setInputCols(SparkMnistPipeline.pixelColumns()).setOutputCol("features");
    }

    /** The predictions for rows ordered by id. */
    private static double[] predictions(PipelineModel model, Dataset<Row> rows) {
        return model.transform(rows).orderBy("id").select("prediction").collectAsList().stream()
                .mapToDouble(r -> r.getDouble(0)).toArray();
    }

    /** Rows {@code from} to {@code to} of the t10k set as (id, digit, p0 ... p783). */
    private Dataset<Row> frame(int from, int to) {
        return SparkMnistPipeline.table(spark, images, labels, from, to);
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
