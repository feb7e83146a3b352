package io.kolo.spark;

import ai.djl.Model;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDList;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.DataType;
import ai.djl.ndarray.types.Shape;
import ai.djl.training.DefaultTrainingConfig;
import ai.djl.training.GradientCollector;
import ai.djl.training.tracker.Tracker;
import ai.djl.Device;
import io.kolo.Communicator;
import io.kolo.ReduceOp;
import io.kolo.djl.DistributedOptions;
import io.kolo.djl.DistributedTrainer;
import io.kolo.djl.KoloDjl;
import io.kolo.djl.ScaledLearningRate;
import org.apache.spark.sql.Row;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;

/**
 * One rank of a {@link DjlEstimator#fit}: trains on its partition's rows (column 0 features, 1 label, 2 whether the
 * row is for validation) with a {@link DistributedTrainer}. Every rank takes the same number of batches per epoch, the
 * most the smallest partition allows, so that no rank waits in an allreduce another never starts.
 */
final class EstimatorRank implements KoloPartitionTask<RankOutcome> {
    private static final long serialVersionUID = 1L;
    private static final System.Logger LOG = System.getLogger(EstimatorRank.class.getName());
    private static final int EVAL_CHUNK = 500;
    /**
     * DJL's PyTorch engine allows one gradient collector per JVM at a time (a static flag), so ranks that share an
     * executor JVM ({@code local[N]}, or executors with several task slots) take turns computing gradients. The turn
     * covers forward and backward only: the gradients' allreduce in {@code step()} stays outside it, where the ranks
     * must all arrive together.
     */
    private static final ReentrantLock GRADIENTS = new ReentrantLock();
    /** A turn is one batch's forward and backward; a rank waiting longer than this means the holder is stuck. */
    private static final long TURN_TIMEOUT_MINUTES = 10;

    private final TrainingPlan plan;

    EstimatorRank(TrainingPlan plan) {
        this.plan = plan;
    }

    @Override
    public RankOutcome call(Communicator comm, Iterator<Row> rows) throws Exception {
        KoloDjl.configureEngine();
        List<float[]> trainX = new ArrayList<>();
        List<Float> trainY = new ArrayList<>();
        List<float[]> valX = new ArrayList<>();
        List<Float> valY = new ArrayList<>();
        rows.forEachRemaining(r -> {
            boolean validation = r.getBoolean(2);
            (validation ? valX : trainX).add(FeatureColumns.features(r, 0));
            (validation ? valY : trainY).add(FeatureColumns.label(r, 1));
        });
        long[] fewest = {trainX.size()};
        comm.allreduce(fewest, ReduceOp.MIN);
        int steps = (int) (fewest[0] / plan.batchSize());
        if (steps == 0) {
            throw new IllegalArgumentException("the smallest partition has " + fewest[0] + " training rows, fewer"
                    + " than one batch of " + plan.batchSize() + ": use a smaller batchSize or fewer ranks (numProc)");
        }
        Shape sample = new Shape(plan.sampleShape());
        Tracker rate = plan.scaleLearningRate()
                ? new ScaledLearningRate(Tracker.fixed(plan.learningRate()), comm.size(), plan.warmupSteps())
                : Tracker.fixed(plan.learningRate());
        DefaultTrainingConfig config = plan.config().create(rate)
                .optDevices(new Device[]{KoloDjl.device(comm.localRank())});
        List<EpochMetrics> epochs = new ArrayList<>();
        try (Model model = Model.newInstance("kolo-spark-estimator")) {
            // Every rank starts from rank 0's parameters (the trainer broadcasts them); seeding makes those, and so a
            // fit, repeatable.
            ai.djl.engine.Engine.getInstance().setRandomSeed((int) plan.seed());
            model.setBlock(plan.block().create());
            try (DistributedTrainer trainer = new DistributedTrainer(model, config, comm, DistributedOptions.defaults())) {
                trainer.initialize(new Shape(1).addAll(sample));
                long firstStep = 0;
                List<Integer> order = new ArrayList<>();
                for (int i = 0; i < trainX.size(); i++) {
                    order.add(i);
                }
                for (int epoch = 1; epoch <= plan.epochs(); epoch++) {
                    long start = System.nanoTime();
                    Collections.shuffle(order, new Random(plan.seed() * 31 + epoch * 1_000_003L + comm.rank()));
                    double lossSum = 0;
                    for (int s = 0; s < steps; s++) {
                        List<Integer> idx = order.subList(s * plan.batchSize(), (s + 1) * plan.batchSize());
                        lossSum += step(trainer, model.getNDManager(), trainX, trainY, idx, sample);
                        if (firstStep == 0) {
                            firstStep = System.currentTimeMillis();
                        }
                    }
                    double trainLoss = trainer.averageAcrossRanks("kolo-spark.loss", lossSum / steps)[0];
                    double[] val = validate(trainer, model.getNDManager(), valX, valY, sample);
                    comm.allreduce(val, ReduceOp.SUM);
                    double seconds = (System.nanoTime() - start) / 1e9;
                    EpochMetrics m = new EpochMetrics(epoch, trainLoss, val[2] == 0 ? Double.NaN : val[0] / val[2],
                            val[2] == 0 ? Double.NaN : val[1] / val[2], seconds);
                    epochs.add(m);
                    if (comm.rank() == 0) {
                        LOG.log(System.Logger.Level.INFO, "kolo-spark fit, " + comm.size() + " ranks: " + m);
                        checkpoint(model, epoch);
                    }
                }
                return new RankOutcome(epochs, comm.rank() == 0 ? Parameters.save(model.getBlock()) : null, firstStep);
            }
        }
    }

    private static double step(DistributedTrainer trainer, NDManager parent, List<float[]> xs, List<Float> ys,
                               List<Integer> idx, Shape sample) {
        try (NDManager m = parent.newSubManager()) {
            List<float[]> rows = new ArrayList<>(idx.size());
            float[] labels = new float[idx.size()];
            for (int i = 0; i < idx.size(); i++) {
                rows.add(xs.get(idx.get(i)));
                labels[i] = ys.get(idx.get(i));
            }
            NDList x = new NDList(Inference.batch(m, rows, sample));
            NDList y = new NDList(m.create(labels));
            double loss;
            takeTurn();
            try (GradientCollector collector = trainer.newGradientCollector()) {
                NDList predictions = trainer.forward(x, y);
                NDArray l = trainer.getLoss().evaluate(y, predictions);
                collector.backward(l);
                loss = l.getFloat();
            } finally {
                GRADIENTS.unlock();
            }
            trainer.step();
            return loss;
        }
    }

    private static void takeTurn() {
        try {
            if (!GRADIENTS.tryLock(TURN_TIMEOUT_MINUTES, TimeUnit.MINUTES)) {
                throw new IllegalStateException("another rank in this executor JVM computed one batch's gradients for"
                        + " over " + TURN_TIMEOUT_MINUTES + " minutes (DJL lets one rank per JVM compute at a time)");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for this JVM's gradient collector", e);
        }
    }

    /** {loss sum, correct, rows} over this rank's validation rows. */
    private static double[] validate(DistributedTrainer trainer, NDManager parent, List<float[]> xs, List<Float> ys,
                                     Shape sample) {
        double[] out = new double[3];
        for (int from = 0; from < xs.size(); from += EVAL_CHUNK) {
            int to = Math.min(xs.size(), from + EVAL_CHUNK);
            try (NDManager m = parent.newSubManager()) {
                float[] labels = new float[to - from];
                for (int i = from; i < to; i++) {
                    labels[i - from] = ys.get(i);
                }
                NDList y = new NDList(m.create(labels));
                NDList predictions = trainer.evaluate(new NDList(Inference.batch(m, xs.subList(from, to), sample)));
                out[0] += trainer.getLoss().evaluate(y, predictions).getFloat() * (to - from);
                NDArray best = predictions.singletonOrThrow().argMax(1);
                out[1] += best.eq(y.singletonOrThrow().toType(best.getDataType(), false)).countNonzero().getLong();
                out[2] += to - from;
            }
        }
        return out;
    }

    private void checkpoint(Model model, int epoch) {
        if (plan.checkpointDir() == null) {
            return;
        }
        try {
            model.setProperty("Epoch", String.valueOf(epoch));
            model.save(Path.of(plan.checkpointDir()), model.getName());
        } catch (IOException e) {
            throw new UncheckedIOException("rank 0 could not save a checkpoint in " + plan.checkpointDir() + ": "
                    + e.getMessage(), e);
        }
    }

    @Override
    public String toString() {
        return "EstimatorRank" + Arrays.toString(plan.sampleShape());
    }
}
