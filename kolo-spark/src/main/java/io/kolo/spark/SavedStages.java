package io.kolo.spark;

import org.apache.hadoop.fs.Path;
import org.apache.spark.ml.param.Params;
import org.apache.spark.ml.util.DefaultParamsReader;
import org.apache.spark.ml.util.DefaultParamsWriter;
import org.apache.spark.ml.util.MLReader;
import org.apache.spark.ml.util.MLWriter;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import scala.Option;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.io.ObjectStreamClass;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * ML persistence of {@link DjlEstimator} and {@link DjlModel}, laid out as Spark's own stages are: {@code metadata/}
 * is Spark's {@code DefaultParamsWriter} JSON (class, uid, Spark version, the {@code Param}s), which
 * {@code PipelineModel.load} reads to find the class whose static {@code read()} loads the stage; {@code data/} is one
 * Parquet row with what is not a {@code Param}: the recipes in Java serialization and, for a model, the trained
 * parameters in DJL's format, the input shape and the training history. Both go through Spark's file system layer, so
 * a path may be local, HDFS or an object store.
 */
final class SavedStages {
    private static final StructType ESTIMATOR_DATA = new StructType()
            .add("blockFactory", DataTypes.BinaryType, false)
            .add("trainingConfigFactory", DataTypes.BinaryType, false);
    private static final StructType EPOCH = new StructType()
            .add("epoch", DataTypes.IntegerType, false)
            .add("trainLoss", DataTypes.DoubleType, false)
            .add("validationLoss", DataTypes.DoubleType, false)
            .add("validationAccuracy", DataTypes.DoubleType, false)
            .add("seconds", DataTypes.DoubleType, false);
    private static final StructType MODEL_DATA = new StructType()
            .add("blockFactory", DataTypes.BinaryType, false)
            .add("parameters", DataTypes.BinaryType, false)
            .add("inputShape", DataTypes.createArrayType(DataTypes.LongType, false), false)
            .add("history", DataTypes.createArrayType(EPOCH, false), false)
            .add("timeToFirstStepMillis", DataTypes.LongType, false);

    private SavedStages() {
    }

    static final class EstimatorWriter extends MLWriter {
        private final DjlEstimator estimator;

        EstimatorWriter(DjlEstimator estimator) {
            this.estimator = estimator;
        }

        @Override
        public void saveImpl(String path) {
            saveMetadata(estimator, path, sparkSession());
            saveData(sparkSession(), path, ESTIMATOR_DATA, RowFactory.create(serialize(estimator.blockFactory()),
                    serialize(estimator.trainingConfigFactory())));
        }
    }

    static final class EstimatorReader extends MLReader<DjlEstimator> {
        @Override
        public DjlEstimator load(String path) {
            DefaultParamsReader.Metadata metadata = loadMetadata(path, sparkSession(), DjlEstimator.class);
            Row data = loadData(sparkSession(), path);
            DjlEstimator estimator = new DjlEstimator(metadata.uid(),
                    deserialize(data.getAs("blockFactory"), BlockFactory.class, path),
                    deserialize(data.getAs("trainingConfigFactory"), TrainingConfigFactory.class, path));
            metadata.getAndSetParams(estimator, Option.empty());
            return estimator;
        }
    }

    static final class ModelWriter extends MLWriter {
        private final DjlModel model;

        ModelWriter(DjlModel model) {
            this.model = model;
        }

        @Override
        public void saveImpl(String path) {
            saveMetadata(model, path, sparkSession());
            TrainedNetwork network = model.network();
            List<Row> history = new ArrayList<>();
            for (EpochMetrics m : model.history()) {
                history.add(RowFactory.create(m.epoch(), m.trainLoss(), m.validationLoss(), m.validationAccuracy(),
                        m.seconds()));
            }
            List<Long> shape = Arrays.stream(network.inputShape()).boxed().toList();
            saveData(sparkSession(), path, MODEL_DATA, RowFactory.create(serialize(network.block()),
                    network.parameters(), shape, history, model.timeToFirstStep().toMillis()));
        }
    }

    static final class ModelReader extends MLReader<DjlModel> {
        @Override
        public DjlModel load(String path) {
            DefaultParamsReader.Metadata metadata = loadMetadata(path, sparkSession(), DjlModel.class);
            Row data = loadData(sparkSession(), path);
            long[] shape = data.<Long>getList(data.fieldIndex("inputShape")).stream().mapToLong(Long::longValue)
                    .toArray();
            List<EpochMetrics> history = new ArrayList<>();
            for (Row e : data.<Row>getList(data.fieldIndex("history"))) {
                history.add(new EpochMetrics(e.getInt(0), e.getDouble(1), e.getDouble(2), e.getDouble(3),
                        e.getDouble(4)));
            }
            TrainedNetwork network = new TrainedNetwork(
                    deserialize(data.getAs("blockFactory"), BlockFactory.class, path), data.getAs("parameters"), shape);
            DjlModel model = new DjlModel(metadata.uid(), network, history,
                    Duration.ofMillis(data.getLong(data.fieldIndex("timeToFirstStepMillis"))));
            metadata.getAndSetParams(model, Option.empty());
            return model;
        }
    }

    private static void saveMetadata(Params stage, String path, SparkSession spark) {
        DefaultParamsWriter.saveMetadata(stage, path, spark);
    }

    private static DefaultParamsReader.Metadata loadMetadata(String path, SparkSession spark, Class<?> expected) {
        return DefaultParamsReader.loadMetadata(path, spark, expected.getName());
    }

    private static void saveData(SparkSession spark, String path, StructType schema, Row row) {
        spark.createDataFrame(List.of(row), schema).repartition(1).write().parquet(dataPath(path));
    }

    private static Row loadData(SparkSession spark, String path) {
        List<Row> rows = spark.read().parquet(dataPath(path)).collectAsList();
        if (rows.size() != 1) {
            throw new IllegalArgumentException("the saved stage at " + path + " has " + rows.size() + " data rows"
                    + " instead of 1: it was not written by DjlEstimator or DjlModel (save it again)");
        }
        return rows.getFirst();
    }

    private static String dataPath(String path) {
        return new Path(path, "data").toString();
    }

    static byte[] serialize(Object recipe) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (ObjectOutputStream out = new ObjectOutputStream(bytes)) {
            out.writeObject(recipe);
        } catch (IOException e) {
            throw new IllegalArgumentException(recipe.getClass().getName() + " cannot be saved: " + e
                    + " (a BlockFactory or TrainingConfigFactory must capture only serializable values)", e);
        }
        return bytes.toByteArray();
    }

    static <T> T deserialize(byte[] bytes, Class<T> type, String path) {
        try (ObjectInputStream in = new ContextClassLoaderInput(new ByteArrayInputStream(bytes))) {
            return type.cast(in.readObject());
        } catch (ClassNotFoundException e) {
            throw new IllegalStateException("the " + type.getSimpleName() + " saved at " + path + " needs class "
                    + e.getMessage() + ", which is not on the class path: add the jar that made it", e);
        } catch (IOException e) {
            throw new UncheckedIOException("the " + type.getSimpleName() + " saved at " + path + " cannot be read: "
                    + e, e);
        }
    }

    /**
     * Resolves classes with the thread's context class loader, the one that sees an application's jars under
     * {@code spark-submit} (the default would use the loader of the nearest class on the stack, Spark's).
     */
    private static final class ContextClassLoaderInput extends ObjectInputStream {
        ContextClassLoaderInput(InputStream in) throws IOException {
            super(in);
        }

        @Override
        protected Class<?> resolveClass(ObjectStreamClass desc) throws IOException, ClassNotFoundException {
            ClassLoader loader = Thread.currentThread().getContextClassLoader();
            if (loader == null) {
                return super.resolveClass(desc);
            }
            try {
                return Class.forName(desc.getName(), false, loader);
            } catch (ClassNotFoundException e) {
                return super.resolveClass(desc);
            }
        }
    }
}
