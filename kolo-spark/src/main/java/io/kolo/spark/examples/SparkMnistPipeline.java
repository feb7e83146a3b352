package io.kolo.spark.examples;

import io.kolo.spark.DjlEstimator;
import org.apache.spark.ml.Pipeline;
import org.apache.spark.ml.PipelineModel;
import org.apache.spark.ml.PipelineStage;
import org.apache.spark.ml.evaluation.MulticlassClassificationEvaluator;
import org.apache.spark.ml.feature.VectorAssembler;
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
 * MNIST as a Spark ML pipeline: the t10k images as a table of a label and 784 pixel columns (first 8,000 rows train,
 * last 2,000 held out), a {@code VectorAssembler} and a {@link DjlEstimator} in one {@code Pipeline}, fitted on
 * {@code --np} barrier tasks, saved to {@code --save DIR}, loaded back and evaluated on the held-out rows.
 *
 * <pre>
 * spark-submit --class io.kolo.spark.examples.SparkMnistPipeline --jars ... kolo-spark.jar --data DIR --save DIR
 * </pre>
 */
public final class SparkMnistPipeline {
    private static final String USAGE = "usage: SparkMnistPipeline --data DIR --save DIR [--np N] [--epochs N]";
    private static final int PIXELS = 784;

    private SparkMnistPipeline() {
    }

    public static void main(String[] args) throws Exception {
        Path data = null;
        String save = null;
        int np = 2;
        int epochs = 3;
        try {
            for (int i = 0; i < args.length; i++) {
                switch (args[i]) {
                    case "--data" -> data = Path.of(args[++i]);
                    case "--save" -> save = args[++i];
                    case "--np" -> np = Integer.parseInt(args[++i]);
                    case "--epochs" -> epochs = Integer.parseInt(args[++i]);
                    default -> throw new IllegalArgumentException("unknown argument '" + args[i] + "'");
                }
            }
            if (data == null || save == null) {
                throw new IllegalArgumentException("--data and --save are required");
            }
        } catch (RuntimeException e) {
            System.err.println("SparkMnistPipeline: " + e.getMessage() + " (" + USAGE + ")");
            System.exit(2);
        }
        float[][] images = MnistFiles.images(data.resolve(MnistFiles.TEST_IMAGES));
        int[] labels = MnistFiles.labels(data.resolve(MnistFiles.TEST_LABELS));
        SparkSession spark = SparkSession.builder().appName("kolo-spark-mnist-pipeline").getOrCreate();
        try {
            Dataset<Row> train = table(spark, images, labels, 0, 8000);
            Dataset<Row> test = table(spark, images, labels, 8000, images.length);

            VectorAssembler assembler = new VectorAssembler().setInputCols(pixelColumns()).setOutputCol("features");
            DjlEstimator djl = new DjlEstimator(SparkMnist::cnn, SparkMnist::adam)
                    .setFeaturesCol("features").setInputShape(1, 28, 28).setLabelCol("digit")
                    .setNumProc(np).setBatchSize(32).setEpochs(epochs).setLearningRate(0.001);
            Pipeline pipeline = new Pipeline().setStages(new PipelineStage[]{assembler, djl});
            PipelineModel model = pipeline.fit(train);
            model.write().overwrite().save(save);

            PipelineModel loaded = PipelineModel.load(save);
            double accuracy = new MulticlassClassificationEvaluator().setLabelCol("digit")
                    .setMetricName("accuracy").evaluate(loaded.transform(test));
            System.out.printf(Locale.ROOT, "SparkMnistPipeline: saved to %s, loaded, held-out accuracy %.2f%%%n",
                    save, 100 * accuracy);
        } finally {
            spark.stop();
        }
    }

    /** The names of the pixel columns, {@code p0} to {@code p783}. */
    public static String[] pixelColumns() {
        String[] names = new String[PIXELS];
        for (int i = 0; i < PIXELS; i++) {
            names[i] = "p" + i;
        }
        return names;
    }

    /** Rows {@code from} to {@code to} as (id, digit, p0 ... p783), pixels as doubles in [0, 1]. */
    public static Dataset<Row> table(SparkSession spark, float[][] images, int[] labels, int from, int to) {
        // MNIST's pixels take 256 values: one boxed Double for each keeps 10,000 rows of 784 columns small.
        Double[] pixel = new Double[256];
        for (int v = 0; v < pixel.length; v++) {
            pixel[v] = (double) (v / 255f);
        }
        StructType schema = new StructType().add("id", DataTypes.IntegerType).add("digit", DataTypes.IntegerType);
        for (String p : pixelColumns()) {
            schema = schema.add(p, DataTypes.DoubleType);
        }
        List<Row> rows = new ArrayList<>(to - from);
        for (int i = from; i < to; i++) {
            Object[] values = new Object[2 + PIXELS];
            values[0] = i;
            values[1] = labels[i];
            for (int p = 0; p < PIXELS; p++) {
                values[2 + p] = pixel[Math.round(images[i][p] * 255)];
            }
            rows.add(RowFactory.create(values));
        }
        return spark.createDataFrame(rows, schema);
    }
}
