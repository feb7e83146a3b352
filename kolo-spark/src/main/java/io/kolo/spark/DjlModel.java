package io.kolo.spark;

import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.function.FlatMapFunction;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;

/**
 * What {@link DjlEstimator#fit} returns: the trained parameters (saved once, by rank 0), the recipe of the network,
 * and the per-epoch metrics. {@link #transform} predicts on the executors, partition by partition.
 *
 * <pre>{@code
 * Dataset<Row> scored = model.predictionCol("digit_hat").transform(test);
 * double[] local = model.predict(List.of(pixels));        // the same network on this JVM
 * }</pre>
 */
public final class DjlModel implements Serializable {
    private static final long serialVersionUID = 1L;
    private static final int CHUNK = 256;

    private final BlockFactory block;
    private final byte[] parameters;
    private final long[] inputShape;
    private final String featureCol;
    @SuppressWarnings("serial") // always a List.copyOf, which is serializable
    private final List<EpochMetrics> history;
    private final java.time.Duration toFirstStep;
    private String predictionCol = "prediction";

    DjlModel(BlockFactory block, byte[] parameters, long[] inputShape, String featureCol, List<EpochMetrics> history,
             java.time.Duration toFirstStep) {
        this.toFirstStep = toFirstStep;
        this.block = block;
        this.parameters = parameters;
        this.inputShape = inputShape;
        this.featureCol = featureCol;
        this.history = List.copyOf(history);
    }

    public DjlModel predictionCol(String column) {
        this.predictionCol = column;
        return this;
    }

    /** Each epoch's loss and validation metrics, averaged over the ranks. */
    public List<EpochMetrics> history() {
        return history;
    }

    /**
     * From the driver's call to {@code fit} to the end of rank 0's first training step: Spark's barrier stage start,
     * the data read, the Kolo job's start and one step (the driver's and rank 0's wall clocks: exact on one host).
     */
    public java.time.Duration timeToFirstStep() {
        return toFirstStep;
    }

    /** The trained parameters in DJL's format ({@code Block.loadParameters} reads them). */
    public byte[] parameters() {
        return parameters.clone();
    }

    /**
     * {@code data}'s rows with a prediction column (the index of the highest output, as a double) added.
     *
     * @throws IllegalArgumentException when the feature column is missing or of the wrong type
     */
    public Dataset<Row> transform(Dataset<Row> data) {
        StructType schema = data.schema();
        FeatureColumns.checkFeatures(schema, featureCol);
        int index = schema.fieldIndex(featureCol);
        JavaRDD<Row> scored = data.toJavaRDD().mapPartitions(new Scoring(this, index));
        return data.sparkSession().createDataFrame(scored, schema.add(predictionCol, DataTypes.DoubleType));
    }

    /** Predictions for feature rows on this JVM (the same network as {@link #transform}). */
    public double[] predict(List<float[]> features) {
        try (Inference inference = new Inference(block, parameters, inputShape)) {
            return inference.predict(features);
        }
    }

    /** One partition's predictions, a chunk of rows at a time. */
    private record Scoring(DjlModel model, int featureIndex) implements FlatMapFunction<Iterator<Row>, Row> {
        @Override
        public Iterator<Row> call(Iterator<Row> rows) {
            List<Row> out = new ArrayList<>();
            try (Inference inference = new Inference(model.block, model.parameters, model.inputShape)) {
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
