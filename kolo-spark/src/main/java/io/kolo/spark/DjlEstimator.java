package io.kolo.spark;

import org.apache.spark.ml.Estimator;
import org.apache.spark.ml.param.BooleanParam;
import org.apache.spark.ml.param.DoubleParam;
import org.apache.spark.ml.param.IntArrayParam;
import org.apache.spark.ml.param.IntParam;
import org.apache.spark.ml.param.LongParam;
import org.apache.spark.ml.param.Param;
import org.apache.spark.ml.param.ParamMap;
import org.apache.spark.ml.param.ParamValidators;
import org.apache.spark.ml.util.Identifiable;
import org.apache.spark.ml.util.MLReader;
import org.apache.spark.ml.util.MLWritable;
import org.apache.spark.ml.util.MLWriter;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.StructType;

import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.stream.Collectors;

/**
 * A Spark ML {@link Estimator} that fits a DJL model on a DataFrame with Kolo, as horovod.spark's estimators do for
 * PySpark: {@link #fit} trains with a {@code DistributedTrainer} on {@code numProc} Spark barrier tasks, each on its
 * partition of the data, and returns a {@link DjlModel} whose {@code transform} adds a prediction column. It sits in a
 * {@code Pipeline} (after a {@code VectorAssembler}, say), is tuned by {@code CrossValidator} through its
 * {@code Param}s, and is saved and loaded with ML persistence ({@link #write()}, {@link #load(String)}).
 *
 * <pre>{@code
 * DjlEstimator djl = new DjlEstimator(MyNets::cnn,
 *                 lr -> new DefaultTrainingConfig(Loss.softmaxCrossEntropyLoss())
 *                         .optOptimizer(Optimizer.adam().optLearningRateTracker(lr).build()))
 *         .setFeaturesCol("features").setInputShape(1, 28, 28).setLabelCol("digit")
 *         .setNumProc(2).setBatchSize(32).setEpochs(3).setLearningRate(0.001).setValidationFraction(0.1);
 * PipelineModel model = new Pipeline().setStages(new PipelineStage[]{assembler, djl}).fit(train);
 * Dataset<Row> scored = model.transform(test);          // test's columns and "prediction"
 * }</pre>
 *
 * <p>Features are a Spark ML {@code Vector} or an {@code array<float>}/{@code array<double>} column, reshaped to
 * {@link #inputShape} per row; labels are numeric (class indices for the validation accuracy). A wrong column name or
 * type fails in {@link #transformSchema} (so in {@code fit} and in a {@code Pipeline}'s checks), before any task
 * starts. Every rank takes the same number of batches per epoch (what the smallest partition allows); the learning
 * rate is scaled by the number of ranks with a warm-up unless {@code scaleLearningRate} is false. Rank 0 saves a
 * checkpoint per epoch when {@link #checkpointDir} is set, on its executor's file system. Per-epoch metrics, averaged
 * over the ranks, are logged by rank 0 as it trains and on the driver when the fit ends ({@link DjlModel#history()}).
 * Ranks that share an executor JVM take turns computing gradients (DJL's PyTorch engine allows one gradient collector
 * per JVM), so one task per executor trains fastest.
 *
 * <p>The network and the training configuration are not {@code Param}s but serializable recipes
 * ({@link BlockFactory}, {@link TrainingConfigFactory}) given to the constructor; saving an estimator or a model
 * stores them in Java serialization, so loading needs their classes on the class path.
 */
public final class DjlEstimator extends Estimator<DjlModel> implements MLWritable {
    private static final long serialVersionUID = 1L;
    private static final System.Logger LOG = System.getLogger(DjlEstimator.class.getName());

    private final String uid;
    private final BlockFactory block;
    private final TrainingConfigFactory config;

    private final Param<String> featuresCol = new Param<>(this, "featuresCol",
            "features column: a Spark ML Vector or array<float> / array<double>");
    private final Param<String> labelCol = new Param<>(this, "labelCol",
            "label column: numeric, the class index for classification");
    private final Param<String> predictionCol = new Param<>(this, "predictionCol",
            "prediction column the model adds: the index of the highest output, as a double");
    private final IntArrayParam inputShape = new IntArrayParam(this, "inputShape",
            "the shape of one row's features as the network takes them (e.g. [1, 28, 28]); empty: a flat vector");
    private final IntParam numProc = new IntParam(this, "numProc",
            "the number of ranks (Spark barrier tasks) that train together (>= 1)", ParamValidators.gtEq(1));
    private final IntParam batchSize = new IntParam(this, "batchSize",
            "rows per batch on each rank; the global batch is numProc times larger (>= 1)", ParamValidators.gtEq(1));
    private final IntParam epochs = new IntParam(this, "epochs", "passes over the training rows (>= 1)",
            ParamValidators.gtEq(1));
    private final DoubleParam learningRate = new DoubleParam(this, "learningRate",
            "the single-rank learning rate handed to the TrainingConfigFactory (> 0)", ParamValidators.gt(0));
    private final BooleanParam scaleLearningRate = new BooleanParam(this, "scaleLearningRate",
            "whether the learning rate grows to numProc times learningRate over warmupSteps updates");
    private final IntParam warmupSteps = new IntParam(this, "warmupSteps",
            "updates over which a scaled learning rate grows (>= 0)", ParamValidators.gtEq(0));
    private final DoubleParam validationFraction = new DoubleParam(this, "validationFraction",
            "the share of rows held out for validation, at random with the seed (in [0, 1))",
            ParamValidators.inRange(0, 1, true, false));
    private final Param<String> validationCol = new Param<>(this, "validationCol",
            "a boolean column marking the validation rows (instead of validationFraction); empty: none");
    private final Param<String> checkpointDir = new Param<>(this, "checkpointDir",
            "where rank 0 saves the model after each epoch, on its executor's file system; empty: no checkpoints");
    private final LongParam seed = new LongParam(this, "seed",
            "seeds the initial parameters, each epoch's shuffle and the validation split");

    /** An estimator of the network {@code block} makes, trained with the loss and optimizer {@code config} makes. */
    public DjlEstimator(BlockFactory block, TrainingConfigFactory config) {
        this(Identifiable.randomUID("djlEstimator"), block, config);
    }

    /** With a given {@link #uid()} (as {@code copy} and {@link #load} keep it). */
    public DjlEstimator(String uid, BlockFactory block, TrainingConfigFactory config) {
        // Before super(): the Param fields' initializers, which run after it, take their parent's uid.
        this.uid = Objects.requireNonNull(uid, "uid");
        this.block = Objects.requireNonNull(block, "block");
        this.config = Objects.requireNonNull(config, "config");
        super();
        setDefault(featuresCol, "features");
        setDefault(labelCol, "label");
        setDefault(predictionCol, "prediction");
        setDefault(inputShape, new int[0]);
        setDefault(numProc, 1);
        setDefault(batchSize, 32);
        setDefault(epochs, 1);
        setDefault(learningRate, 0.001);
        setDefault(scaleLearningRate, true);
        setDefault(warmupSteps, 100);
        setDefault(validationFraction, 0.0);
        setDefault(validationCol, "");
        setDefault(checkpointDir, "");
        setDefault(seed, 42L);
    }

    @Override
    public String uid() {
        return uid;
    }

    public Param<String> featuresCol() {
        return featuresCol;
    }

    public Param<String> labelCol() {
        return labelCol;
    }

    public Param<String> predictionCol() {
        return predictionCol;
    }

    public IntArrayParam inputShape() {
        return inputShape;
    }

    public IntParam numProc() {
        return numProc;
    }

    public IntParam batchSize() {
        return batchSize;
    }

    public IntParam epochs() {
        return epochs;
    }

    public DoubleParam learningRate() {
        return learningRate;
    }

    public BooleanParam scaleLearningRate() {
        return scaleLearningRate;
    }

    public IntParam warmupSteps() {
        return warmupSteps;
    }

    public DoubleParam validationFraction() {
        return validationFraction;
    }

    public Param<String> validationCol() {
        return validationCol;
    }

    public Param<String> checkpointDir() {
        return checkpointDir;
    }

    public LongParam seed() {
        return seed;
    }

    public DjlEstimator setFeaturesCol(String column) {
        return with(featuresCol, Objects.requireNonNull(column, "column"));
    }

    public DjlEstimator setLabelCol(String column) {
        return with(labelCol, Objects.requireNonNull(column, "column"));
    }

    public DjlEstimator setPredictionCol(String column) {
        return with(predictionCol, Objects.requireNonNull(column, "column"));
    }

    /** The shape of one row's features as the network takes them (e.g. 1, 28, 28); none: a flat vector. */
    public DjlEstimator setInputShape(int... shape) {
        for (int d : shape) {
            if (d < 1) {
                throw new IllegalArgumentException("inputShape " + Arrays.toString(shape)
                        + " has a dimension below 1: give the shape of one row's features");
            }
        }
        return with(inputShape, shape.clone());
    }

    public DjlEstimator setNumProc(int ranks) {
        return with(numProc, positive("numProc", ranks));
    }

    /** Rows per batch on each rank (the global batch is {@code numProc} times larger). */
    public DjlEstimator setBatchSize(int rows) {
        return with(batchSize, positive("batchSize", rows));
    }

    public DjlEstimator setEpochs(int count) {
        return with(epochs, positive("epochs", count));
    }

    /** The single-rank learning rate handed to the {@link TrainingConfigFactory} (scaled, see below). */
    public DjlEstimator setLearningRate(double rate) {
        if (!(rate > 0)) {
            throw new IllegalArgumentException("learningRate must be above 0, not " + rate);
        }
        return with(learningRate, rate);
    }

    /**
     * Whether the rate grows to {@code numProc} times {@link #learningRate} over {@link #warmupSteps} updates (Goyal et
     * al.; the default, with 100 steps), as the global batch is {@code numProc} times larger.
     */
    public DjlEstimator setScaleLearningRate(boolean scale) {
        return with(scaleLearningRate, scale);
    }

    public DjlEstimator setWarmupSteps(int steps) {
        if (steps < 0) {
            throw new IllegalArgumentException("warmupSteps must be at least 0, not " + steps);
        }
        return with(warmupSteps, steps);
    }

    /** The share of rows held out for validation (chosen at random with the seed); 0, the default, holds none. */
    public DjlEstimator setValidationFraction(double fraction) {
        if (!(fraction >= 0 && fraction < 1)) {
            throw new IllegalArgumentException("validationFraction must be in [0, 1), not " + fraction);
        }
        return with(validationFraction, fraction);
    }

    /**
     * A boolean column whose true rows are for validation only (the validation rows of their own, unioned with the
     * training rows), instead of {@link #validationFraction}; "" (the default) for none.
     */
    public DjlEstimator setValidationCol(String column) {
        return with(validationCol, Objects.requireNonNull(column, "column"));
    }

    /** Where rank 0 saves the model after each epoch (a path on its executor's file system, e.g. a shared mount). */
    public DjlEstimator setCheckpointDir(String dir) {
        return with(checkpointDir, Objects.requireNonNull(dir, "dir"));
    }

    /** Seeds the initial parameters, the shuffling of each epoch and the validation split (default 42). */
    public DjlEstimator setSeed(long value) {
        return with(seed, value);
    }

    public String getFeaturesCol() {
        return getOrDefault(featuresCol);
    }

    public String getLabelCol() {
        return getOrDefault(labelCol);
    }

    public String getPredictionCol() {
        return getOrDefault(predictionCol);
    }

    public int[] getInputShape() {
        return getOrDefault(inputShape).clone();
    }

    public int getNumProc() {
        return (Integer) getOrDefault(numProc);
    }

    public int getBatchSize() {
        return (Integer) getOrDefault(batchSize);
    }

    public int getEpochs() {
        return (Integer) getOrDefault(epochs);
    }

    public double getLearningRate() {
        return (Double) getOrDefault(learningRate);
    }

    public boolean getScaleLearningRate() {
        return (Boolean) getOrDefault(scaleLearningRate);
    }

    public int getWarmupSteps() {
        return (Integer) getOrDefault(warmupSteps);
    }

    public double getValidationFraction() {
        return (Double) getOrDefault(validationFraction);
    }

    public String getValidationCol() {
        return getOrDefault(validationCol);
    }

    public String getCheckpointDir() {
        return getOrDefault(checkpointDir);
    }

    public long getSeed() {
        return (Long) getOrDefault(seed);
    }

    BlockFactory blockFactory() {
        return block;
    }

    TrainingConfigFactory trainingConfigFactory() {
        return config;
    }

    /**
     * The schema {@link DjlModel#transform} will give: {@code schema} and the prediction column.
     *
     * @throws IllegalArgumentException in one line naming the column and the expected type, when a column is missing
     *                                  or of the wrong type, or the prediction column exists already
     */
    @Override
    public StructType transformSchema(StructType schema) {
        FeatureColumns.checkFeatures(schema, getFeaturesCol());
        FeatureColumns.checkLabel(schema, getLabelCol());
        if (!getValidationCol().isEmpty()) {
            FeatureColumns.checkValidation(schema, getValidationCol());
            if (getValidationFraction() > 0) {
                throw new IllegalArgumentException("both validationCol '" + getValidationCol()
                        + "' and validationFraction " + getValidationFraction() + " are set: choose one");
            }
        }
        return FeatureColumns.withPrediction(schema, getPredictionCol());
    }

    /**
     * Trains on {@code data}'s rows across {@code numProc} ranks and returns the trained model.
     *
     * @throws IllegalArgumentException naming the column and the expected type when a column is missing or wrong
     * @throws KoloSparkException       when the job fails (see {@link KoloSpark#run})
     */
    @Override
    public DjlModel fit(Dataset<?> dataset) {
        Dataset<Row> data = dataset.toDF();
        transformSchema(data.schema());
        long length = featureLength(data);
        long[] shape = getInputShape().length > 0 ? Arrays.stream(getInputShape()).asLongStream().toArray()
                : new long[]{length};
        long holds = Arrays.stream(shape).reduce(1, Math::multiplyExact);
        if (holds != length) {
            // Checked here, once: on the ranks it fails only after the stage started, and Spark retries the stage.
            throw new IllegalArgumentException("inputShape " + Arrays.stream(shape).mapToObj(Long::toString)
                    .collect(Collectors.joining(", ", "(", ")")) + " holds " + holds + " values but the rows of feature"
                    + " column '" + getFeaturesCol() + "' have " + length + ": give the shape of one row's features");
        }
        Column held = !getValidationCol().isEmpty() ? data.col(getValidationCol()).cast("boolean")
                : getValidationFraction() > 0 ? functions.rand(getSeed()).lt(getValidationFraction())
                : functions.lit(false);
        Dataset<Row> rows = data.select(data.col(getFeaturesCol()), data.col(getLabelCol()).cast("double"),
                functions.coalesce(held, functions.lit(false)).as("kolo_validation"));
        TrainingPlan plan = new TrainingPlan(block, config, shape, getBatchSize(), getEpochs(),
                (float) getLearningRate(), getScaleLearningRate(), getWarmupSteps(), getSeed(),
                getCheckpointDir().isEmpty() ? null : getCheckpointDir());
        long fitStart = System.currentTimeMillis();
        List<RankOutcome> ranks = KoloSpark.run(data.sparkSession(), rows, getNumProc(), new EstimatorRank(plan));
        List<EpochMetrics> history = ranks.getFirst().epochs();
        for (EpochMetrics m : history) {
            LOG.log(System.Logger.Level.INFO, "DjlEstimator, " + getNumProc() + " ranks: " + m);
        }
        java.time.Duration toFirstStep = java.time.Duration.ofMillis(ranks.getFirst().firstStepMillis() - fitStart);
        DjlModel model = new DjlModel(uid, new TrainedNetwork(block, ranks.getFirst().parameters(), shape), history,
                toFirstStep);
        return copyValues(model, new ParamMap()).setParent(this);
    }

    @Override
    public DjlEstimator copy(ParamMap extra) {
        return copyValues(new DjlEstimator(uid, block, config), extra);
    }

    /** Saves the {@code Param}s (Spark's metadata) and the two recipes (Java serialization) under a path. */
    @Override
    public MLWriter write() {
        return new SavedStages.EstimatorWriter(this);
    }

    /** Reads what {@link #write()} saved. */
    public static MLReader<DjlEstimator> read() {
        return new SavedStages.EstimatorReader();
    }

    /** {@code read().load(path)}. */
    public static DjlEstimator load(String path) {
        return read().load(path);
    }

    /** The length of the first row's features. */
    private long featureLength(Dataset<Row> data) {
        List<Row> first = data.select(getFeaturesCol()).limit(1).collectAsList();
        if (first.isEmpty()) {
            throw new IllegalArgumentException("the DataFrame has no rows to train on");
        }
        return FeatureColumns.features(first.getFirst(), 0).length;
    }

    private <T> DjlEstimator with(Param<T> param, T value) {
        set(param, value);
        return this;
    }

    private static int positive(String what, int value) {
        if (value < 1) {
            throw new IllegalArgumentException(what + " must be at least 1, not " + value);
        }
        return value;
    }
}
