package io.kolo.spark;

import org.apache.spark.ml.feature.VectorAssembler;
import org.apache.spark.ml.param.Param;
import org.apache.spark.ml.param.ParamMap;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * DjlEstimator and DjlModel as Spark ML stages: their {@code Param}s, {@code copy}, {@code transformSchema}'s
 * one-line errors, and ML persistence, in {@code local[2]} (the MNIST pipeline on local-cluster is
 * {@link DjlEstimatorTest}).
 */
class DjlStageTest {
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

    private static DjlEstimator estimator() {
        return new DjlEstimator(DjlEstimatorOptionsTest::mlp, DjlEstimatorOptionsTest::adam);
    }

    @Test
    void paramsHaveDefaultsAndCopyKeepsTheUidAndTakesTheExtraValues() {
        DjlEstimator e = estimator();
        Set<String> names = Arrays.stream(e.params()).map(Param::name).collect(Collectors.toSet());
        assertEquals(Set.of("featuresCol", "labelCol", "predictionCol", "inputShape", "numProc", "batchSize", "epochs",
                "learningRate", "scaleLearningRate", "warmupSteps", "validationFraction", "validationCol",
                "checkpointDir", "seed"), names, "Spark finds every Param");
        assertEquals("features", e.getFeaturesCol());
        assertEquals("label", e.getLabelCol());
        assertEquals("prediction", e.getPredictionCol());
        assertEquals(1, e.getNumProc());
        assertEquals(32, e.getBatchSize());
        assertEquals(0.001, e.getLearningRate());
        assertTrue(e.uid().startsWith("djlEstimator_"), e.uid());
        assertNotEquals(e.uid(), estimator().uid());

        e.setNumProc(2).setEpochs(3);
        DjlEstimator copy = e.copy(new ParamMap().put(e.learningRate(), 0.5));
        assertEquals(e.uid(), copy.uid());
        assertEquals(0.5, copy.getLearningRate());
        assertEquals(0.001, e.getLearningRate(), "the original keeps its rate");
        assertEquals(2, copy.getNumProc());
        assertEquals(3, copy.getEpochs());

        assertEquals("numProc must be at least 1, not 0",
                assertThrows(IllegalArgumentException.class, () -> e.setNumProc(0)).getMessage());
        assertTrue(assertThrows(IllegalArgumentException.class, () -> new ParamMap().put(e.numProc(), 0))
                .getMessage().contains("numProc given invalid value 0"), "Spark checks a ParamMap's values too");
    }

    @Test
    void wrongColumnsFailInTransformSchemaBeforeAnyTaskStartsInOneLine() {
        StructType schema = new StructType().add("name", DataTypes.StringType)
                .add("pixels", DataTypes.createArrayType(DataTypes.FloatType)).add("digit", DataTypes.IntegerType)
                .add("prediction", DataTypes.DoubleType);
        Dataset<Row> df = spark.createDataFrame(List.of(RowFactory.create("seven", new float[]{1, 2}, 7, 0.0)), schema);
        DjlEstimator e = estimator().setNumProc(2);
        assertEquals("no column 'image' in the DataFrame (its columns: name, pixels, digit, prediction)",
                assertThrows(IllegalArgumentException.class, () -> e.setFeaturesCol("image").fit(df)).getMessage());
        assertEquals("feature column 'name' is string: expected " + FeatureColumns.FEATURES_EXPECTED,
                assertThrows(IllegalArgumentException.class, () -> e.setFeaturesCol("name").transformSchema(schema))
                        .getMessage());
        assertEquals("label column 'name' is string: expected a numeric type (the class index for classification)",
                assertThrows(IllegalArgumentException.class,
                        () -> e.setFeaturesCol("pixels").setLabelCol("name").transformSchema(schema)).getMessage());
        assertEquals("prediction column 'prediction' exists already in the DataFrame: set another predictionCol or"
                + " drop the column", assertThrows(IllegalArgumentException.class,
                () -> e.setLabelCol("digit").transformSchema(schema)).getMessage());
        assertEquals("validation column 'digit' is int: expected boolean (true for the rows to validate on)",
                assertThrows(IllegalArgumentException.class,
                        () -> e.setPredictionCol("p").setValidationCol("digit").transformSchema(schema)).getMessage());
        StructType out = e.setValidationCol("").transformSchema(schema);
        assertEquals(DataTypes.DoubleType, out.apply("p").dataType(), "the model's output schema");
    }

    @Test
    void aSavedModelAndEstimatorLoadWithTheirParamsAndTheModelPredictsTheSame(@TempDir Path dir) throws Exception {
        Dataset<Row> rows = points(400);
        DjlEstimator e = estimator().setLabelCol("side").setPredictionCol("guess").setNumProc(2).setBatchSize(16)
                .setEpochs(2).setLearningRate(0.02).setSeed(5);
        DjlModel model = e.fit(rows);
        String modelPath = dir.resolve("model").toString();
        model.write().save(modelPath);
        String estimatorPath = dir.resolve("estimator").toString();
        e.write().save(estimatorPath);

        DjlModel loaded = DjlModel.load(modelPath);
        assertEquals(model.uid(), loaded.uid());
        assertEquals("guess", loaded.getPredictionCol());
        assertArrayEquals(model.parameters(), loaded.parameters());
        assertArrayEquals(model.inputShape(), loaded.inputShape());
        assertEquals(model.history(), loaded.history());
        List<Double> before = model.transform(rows).select("guess").as(org.apache.spark.sql.Encoders.DOUBLE())
                .collectAsList();
        List<Double> after = loaded.transform(rows).select("guess").as(org.apache.spark.sql.Encoders.DOUBLE())
                .collectAsList();
        assertEquals(before, after);
        assertTrue(before.stream().distinct().count() == 2, "the model predicts both classes: " + before);

        DjlEstimator again = DjlEstimator.load(estimatorPath);
        assertEquals(e.uid(), again.uid());
        for (Param<?> p : e.params()) {
            assertTrue(java.util.Objects.deepEquals(e.getOrDefault(p), again.getOrDefault(again.getParam(p.name()))),
                    p.name() + " is saved and loaded");
        }
        assertEquals(5L, again.getSeed());
        assertInstanceOf(ai.djl.nn.SequentialBlock.class, again.blockFactory().create(), "the recipe came back");

        IllegalArgumentException wrong = assertThrows(IllegalArgumentException.class,
                () -> DjlModel.load(estimatorPath));
        assertTrue(wrong.getMessage().contains("io.kolo.spark.DjlModel") && !wrong.getMessage().contains("\n"),
                wrong.getMessage());
    }

    @Test
    void aSavedRecipeWhoseClassIsNotOnTheClassPathFailsInOneLineNamingTheClass() {
        byte[] saved = SavedStages.serialize(new Recipe());
        // The same stream naming a class that no jar has: what a load sees without the application's jar.
        byte[] renamed = new String(saved, StandardCharsets.ISO_8859_1)
                .replace("DjlStageTest$Recipe", "DjlStageTest$Recipf").getBytes(StandardCharsets.ISO_8859_1);
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> SavedStages.deserialize(renamed, BlockFactory.class, "/models/m"));
        assertEquals("the BlockFactory saved at /models/m needs class io.kolo.spark.DjlStageTest$Recipf, which is not"
                + " on the class path: add the jar that made it", e.getMessage());
        assertInstanceOf(Recipe.class, SavedStages.deserialize(saved, BlockFactory.class, "/models/m"));
    }

    private record Recipe() implements BlockFactory {
        @Override
        public ai.djl.nn.Block create() {
            return DjlEstimatorOptionsTest.mlp();
        }
    }

    /** {@code n} points of four coordinates, assembled into a {@code features} Vector, with their side of a plane. */
    private static Dataset<Row> points(int n) {
        Random random = new Random(11);
        List<Row> rows = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            double[] x = {random.nextDouble() * 2 - 1, random.nextDouble() * 2 - 1, random.nextDouble() * 2 - 1,
                    random.nextDouble() * 2 - 1};
            rows.add(RowFactory.create(x[0], x[1], x[2], x[3], x[0] + x[1] - x[2] + 0.5 * x[3] > 0 ? 1 : 0));
        }
        StructType schema = new StructType().add("x0", DataTypes.DoubleType).add("x1", DataTypes.DoubleType)
                .add("x2", DataTypes.DoubleType).add("x3", DataTypes.DoubleType).add("side", DataTypes.IntegerType);
        return new VectorAssembler().setInputCols(new String[]{"x0", "x1", "x2", "x3"}).setOutputCol("features")
                .transform(spark.createDataFrame(rows, schema));
    }
}
