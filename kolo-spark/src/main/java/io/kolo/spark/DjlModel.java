package io.kolo.spark;

import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.function.FlatMapFunction;
import org.apache.spark.ml.Model;
import org.apache.spark.ml.param.Param;
import org.apache.spark.ml.param.ParamMap;
import org.apache.spark.ml.util.MLReader;
import org.apache.spark.ml.util.MLWritable;
import org.apache.spark.ml.util.MLWriter;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.types.StructType;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.Objects;

/**
 * What {@link DjlEstimator#fit} returns, a Spark ML {@link Model}: the trained network (its recipe and the parameters
 * rank 0 saved once) and the per-epoch metrics. {@link #transform} predicts on the executors, partition by partition;
 * {@link #write()} and {@link #load(String)} save it and read it back (also as a stage of a {@code PipelineModel}).
 *
 * <pre>{@code
 * Dataset<Row> scored = model.setPredictionCol("digit_hat").transform(test);
 * double[] local = model.predict(List.of(pixels));        // the same network on this JVM
 * model.write().overwrite().save("/models/mnist");
 * DjlModel again = DjlModel.load("/models/mnist");         // in any SparkSession whose class path has the BlockFactory
 * }</pre>
 */
public final class DjlModel extends Model<DjlModel> implements MLWritable {
    private static final long serialVersionUID = 1L;
    private static final int CHUNK = 256;

    private final String uid;
    private final TrainedNetwork network;
    @SuppressWarnings("serial") // always a List.copyOf, which is serializable
    private final List<EpochMetrics> history;
    private final Duration toFirstStep;

    private final Param<String> featuresCol = new Param<>(this, "featuresCol",
            "features column: a Spark ML Vector or array<float> / array<double>");
    private final Param<String> predictionCol = new Param<>(this, "predictionCol",
            "prediction column transform adds: the index of the highest output, as a double");

    DjlModel(String uid, TrainedNetwork network, List<EpochMetrics> history, Duration toFirstStep) {
        // Before super(): the Param fields' initializers, which run after it, take their parent's uid.
        this.uid = Objects.requireNonNull(uid, "uid");
        this.network = network;
        this.history = List.copyOf(history);
        this.toFirstStep = toFirstStep;
        super();
        setDefault(featuresCol, "features");
        setDefault(predictionCol, "prediction");
    }

    @Override
    public String uid() {
        return uid;
    }

    public Param<String> featuresCol() {
        return featuresCol;
    }

    public Param<String> predictionCol() {
        return predictionCol;
    }

    public DjlModel setFeaturesCol(String column) {
        set(featuresCol, Objects.requireNonNull(column, "column"));
        return this;
    }

    public DjlModel setPredictionCol(String column) {
        set(predictionCol, Objects.requireNonNull(column, "column"));
        return this;
    }

    public String getFeaturesCol() {
        return getOrDefault(featuresCol);
    }

    public String getPredictionCol() {
        return getOrDefault(predictionCol);
    }

    /** Each epoch's loss and validation metrics, averaged over the ranks (kept when the model is saved). */
    public List<EpochMetrics> history() {
        return history;
    }

    /**
     * From the driver's call to {@code fit} to the end of rank 0's first training step: Spark's barrier stage start,
     * the data read, the Kolo job's start and one step (the driver's and rank 0's wall clocks: exact on one host).
     */
    public Duration timeToFirstStep() {
        return toFirstStep;
    }

    /** The trained parameters in DJL's format ({@code Block.loadParameters} reads them). */
    public byte[] parameters() {
        return network.parameters().clone();
    }

    /** The shape of one row's features as the network takes them. */
    public long[] inputShape() {
        return network.inputShape().clone();
    }

    TrainedNetwork network() {
        return network;
    }

    /**
     * {@code schema} and the prediction column.
     *
     * @throws IllegalArgumentException when the feature column is missing or of the wrong type, or the prediction
     *                                  column exists already
     */
    @Override
    public StructType transformSchema(StructType schema) {
        FeatureColumns.checkFeatures(schema, getFeaturesCol());
        return FeatureColumns.withPrediction(schema, getPredictionCol());
    }

    /**
     * {@code data}'s rows with a prediction column (the index of the highest output, as a double) added.
     *
     * @throws IllegalArgumentException when the feature column is missing or of the wrong type
     */
    @Override
    public Dataset<Row> transform(Dataset<?> data) {
        StructType schema = data.schema();
        StructType out = transformSchema(schema);
        int index = schema.fieldIndex(getFeaturesCol());
        JavaRDD<Row> scored = data.toDF().toJavaRDD().mapPartitions(new Scoring(network, index));
        return data.sparkSession().createDataFrame(scored, out);
    }

    /** Predictions for feature rows on this JVM (the same network as {@link #transform}). */
    public double[] predict(List<float[]> features) {
        try (Inference inference = network.open()) {
            return inference.predict(features);
        }
    }

    @Override
    public DjlModel copy(ParamMap extra) {
        DjlModel copy = copyValues(new DjlModel(uid, network, history, toFirstStep), extra);
        return parent() == null ? copy : copy.setParent(parent());
    }

    /** Saves the {@code Param}s (Spark's metadata), the network's recipe and parameters, and the history. */
    @Override
    public MLWriter write() {
        return new SavedStages.ModelWriter(this);
    }

    /** Reads what {@link #write()} saved. */
    public static MLReader<DjlModel> read() {
        return new SavedStages.ModelReader();
    }

    /** {@code read().load(path)}. */
    public static DjlModel load(String path) {
        return read().load(path);
    }

    /** One partition's predictions, a chunk of rows at a time. */
    private record Scoring(TrainedNetwork network, int featureIndex) implements FlatMapFunction<Iterator<Row>, Row> {
        @Override
        public Iterator<Row> call(Iterator<Row> rows) {
            List<Row> out = new ArrayList<>();
            try (Inference inference = network.open()) {
                List<Row> chunk = new ArrayList<>(CHUNK);
                while (rows.hasNext()) {
                    chunk.add(rows.next());
                    if (chunk.size() == CHUNK || !rows.hasNext()) {
                        List<float[]> features = new ArrayList<>(chunk.size());
                        for (Row r : chunk) {
                            features.add(FeatureColumns.features(r, featureIndex));
                        }
                        double[] predicted = inference.predict(features);
                        for (int i = 0; i < chunk.size(); i++) {
                            Object[] values = Arrays.copyOf(rowValues(chunk.get(i)), chunk.get(i).size() + 1);
                            values[values.length - 1] = predicted[i];
                            out.add(RowFactory.create(values));
                        }
                        chunk.clear();
                    }
                }
            }
            return out.iterator();
        }

        private static Object[] rowValues(Row r) {
            Object[] v = new Object[r.size()];
            for (int i = 0; i < v.length; i++) {
                v[i] = r.get(i);
            }
            return v;
        }
    }
}
