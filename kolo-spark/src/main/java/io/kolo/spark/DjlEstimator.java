package io.kolo.spark;

import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.functions;

import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.stream.Collectors;

/**
 * Fits a DJL model on a DataFrame with Kolo, in the spirit of horovod.spark's estimators: {@link #fit} trains with a
 * {@code DistributedTrainer} on {@code numProc} Spark barrier tasks, each on its partition of the data, and returns a
 * {@link DjlModel} whose {@code transform} adds a prediction column.
 *
 * <pre>{@code
 * DjlModel model = new DjlEstimator(MyNets::cnn,
 *                 lr -> new DefaultTrainingConfig(Loss.softmaxCrossEntropyLoss())
 *                         .optOptimizer(Optimizer.adam().optLearningRateTracker(lr).build()))
 *         .featureCol("pixels").inputShape(1, 28, 28).labelCol("digit")
 *         .numProc(2).batchSize(32).epochs(3).learningRate(0.001f).validationFraction(0.1)
 *         .fit(train);
 * Dataset<Row> scored = model.transform(test);          // test's columns and "prediction"
 * }</pre>
 *
 * <p>Features are a Spark ML {@code Vector} or an {@code array<float>}/{@code array<double>} column, reshaped to
 * {@link #inputShape} per row; labels are numeric (class indices for the validation accuracy). A wrong column name or
 * type fails in {@code fit}, before any task starts. Every rank takes the same number of batches per epoch (what the
 * smallest partition allows); the learning rate is scaled by the number of ranks with a warm-up unless
 * {@code scaleLearningRate(false)}. Rank 0 saves a checkpoint per epoch when {@link #checkpointDir} is set, on its
 * executor's file system. Per-epoch metrics, averaged over the ranks, are logged by rank 0 as it trains and on the
 * driver when the fit ends ({@link DjlModel#history()}). Ranks that share an executor JVM take turns computing
 * gradients (DJL's PyTorch engine allows one gradient collector per JVM), so one task per executor trains fastest.
 */
public final class DjlEstimator {
    private static final System.Logger LOG = System.getLogger(DjlEstimator.class.getName());

    private final BlockFactory block;
    private final TrainingConfigFactory config;
    private String featureCol = "features";
    private String labelCol = "label";
    private long[] inputShape;
    private int numProc = 1;
    private int batchSize = 32;
    private int epochs = 1;
    private float learningRate = 0.001f;
    private boolean scaleLearningRate = true;
    private int warmupSteps = 100;
    private double validationFraction;
    private Dataset<Row> validation;
    private String checkpointDir;
    private long seed = 42;

    public DjlEstimator(BlockFactory block, TrainingConfigFactory config) {
        this.block = Objects.requireNonNull(block, "block");
        this.config = Objects.requireNonNull(config, "config");
    }

    public DjlEstimator featureCol(String column) {
        this.featureCol = Objects.requireNonNull(column, "column");
        return this;
    }

    public DjlEstimator labelCol(String column) {
        this.labelCol = Objects.requireNonNull(column, "column");
        return this;
    }

    /** The shape of one row's features as the network takes them (e.g. 1, 28, 28); default: a flat vector. */
    public DjlEstimator inputShape(long... shape) {
        this.inputShape = shape.clone();
        return this;
    }

    public DjlEstimator numProc(int ranks) {
        this.numProc = positive("numProc", ranks);
        return this;
    }

    /** Rows per batch on each rank (the global batch is {@code numProc} times larger). */
    public DjlEstimator batchSize(int rows) {
        this.batchSize = positive("batchSize", rows);
        return this;
    }

    public DjlEstimator epochs(int count) {
        this.epochs = positive("epochs", count);
        return this;
    }

    /** The single-rank learning rate handed to the {@link TrainingConfigFactory} (scaled, see below). */
    public DjlEstimator learningRate(float rate) {
        this.learningRate = rate;
        return this;
    }

    /**
     * Whether the rate grows to {@code numProc} times {@link #learningRate} over {@code warmupSteps} updates (Goyal et
     * al.; the default, with 100 steps), as the global batch is {@code numProc} times larger.
     */
    public DjlEstimator scaleLearningRate(boolean scale, int warmupSteps) {
        this.scaleLearningRate = scale;
        this.warmupSteps = Math.max(0, warmupSteps);
        return this;
    }

    /** The share of rows held out for validation (chosen at random with the seed); 0, the default, holds none. */
    public DjlEstimator validationFraction(double fraction) {
        if (!(fraction >= 0 && fraction < 1)) {
            throw new IllegalArgumentException("validationFraction must be in [0, 1), not " + fraction);
        }
        this.validationFraction = fraction;
        return this;
    }

    /** Validation rows of their own, with the same columns, instead of a fraction of the training rows. */
    public DjlEstimator validation(Dataset<Row> rows) {
        this.validation = rows;
        return this;
    }

    /** Where rank 0 saves the model after each epoch (a path on its executor's file system, e.g. a shared mount). */
    public DjlEstimator checkpointDir(Path dir) {
        this.checkpointDir = dir.toString();
        return this;
    }

    /** Seeds the initial parameters, the shuffling of each epoch and the validation split (default 42). */
    public DjlEstimator seed(long value) {
        this.seed = value;
        return this;
    }

    /**
     * Trains on {@code data}'s rows across {@code numProc} ranks and returns the trained model.
     *
     * @throws IllegalArgumentException naming the column and the expected type when a column is missing or wrong
     * @throws KoloSparkException       when the job fails (see {@link KoloSpark#run})
     */
    public DjlModel fit(Dataset<Row> data) {
        FeatureColumns.checkFeatures(data.schema(), featureCol);
        FeatureColumns.checkLabel(data.schema(), labelCol);
        Column held = validationFraction > 0 ? functions.rand(seed).lt(validationFraction) : functions.lit(false);
        Dataset<Row> rows = columns(data, held);
        if (validation != null) {
            FeatureColumns.checkFeatures(validation.schema(), featureCol);
            FeatureColumns.checkLabel(validation.schema(), labelCol);
            rows = rows.union(columns(validation, functions.lit(true)));
        }
        long length = featureLength(data);
        long[] shape = inputShape != null ? inputShape : new long[]{length};
        long holds = Arrays.stream(shape).reduce(1, Math::multiplyExact);
        if (holds != length) {
            // Checked here, once: on the ranks it fails only after the stage started, and Spark retries the stage.
            throw new IllegalArgumentException("inputShape " + Arrays.stream(shape).mapToObj(Long::toString)
                    .collect(Collectors.joining(", ", "(", ")")) + " holds " + holds + " values but the rows of feature"
                    + " column '" + featureCol + "' have " + length + ": give the shape of one row's features");
        }
        TrainingPlan plan = new TrainingPlan(block, config, shape, batchSize, epochs, learningRate, scaleLearningRate,
                warmupSteps, seed, checkpointDir);
        long fitStart = System.currentTimeMillis();
        List<RankOutcome> ranks = KoloSpark.run(data.sparkSession(), rows, numProc, new EstimatorRank(plan));
        List<EpochMetrics> history = ranks.getFirst().epochs();
        for (EpochMetrics m : history) {
            LOG.log(System.Logger.Level.INFO, "DjlEstimator, " + numProc + " ranks: " + m);
        }
        java.time.Duration toFirstStep = java.time.Duration.ofMillis(ranks.getFirst().firstStepMillis() - fitStart);
        return new DjlModel(block, ranks.getFirst().parameters(), shape, featureCol, history, toFirstStep);
    }

    private Dataset<Row> columns(Dataset<Row> d, Column held) {
        return d.select(d.col(featureCol), d.col(labelCol).cast("double"), held.as("kolo_validation"));
    }

    /** The length of the first row's features. */
    private long featureLength(Dataset<Row> data) {
        List<Row> first = data.select(featureCol).limit(1).collectAsList();
        if (first.isEmpty()) {
            throw new IllegalArgumentException("the DataFrame has no rows to train on");
        }
        return FeatureColumns.features(first.getFirst(), 0).length;
    }

    private static int positive(String what, int value) {
        if (value < 1) {
            throw new IllegalArgumentException(what + " must be at least 1, not " + value);
        }
        return value;
    }
}
