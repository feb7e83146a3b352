package io.kolo.djl;

import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDList;
import ai.djl.training.loss.Loss;

/**
 * The training config's loss, unchanged, that remembers the value of the last loss it computed: what the
 * {@link DistributedTrainer} reports at its next step, whichever loop computed it (DJL's {@code EasyTrain} or a
 * hand-written one that calls {@code trainer.getLoss().evaluate(...)}).
 */
final class ReportedLoss extends Loss {
    private final Loss loss;
    private double last = Double.NaN;

    ReportedLoss(Loss loss) {
        super(loss.getName());
        this.loss = loss;
    }

    @Override
    public NDArray evaluate(NDList labels, NDList predictions) {
        NDArray value = loss.evaluate(labels, predictions);
        // A loss is a scalar (DJL's losses average over the batch); the training loop reads it as one anyway.
        if (value.size() == 1) {
            switch (value.getDataType()) {
                case FLOAT32 -> last = value.getFloat();
                case FLOAT64 -> last = value.getDouble();
                default -> { }
            }
        }
        return value;
    }

    /** The last loss computed, NaN before the first; then NaN again until the next. */
    double take() {
        double v = last;
        last = Double.NaN;
        return v;
    }

    @Override
    public void addAccumulator(String key) {
        loss.addAccumulator(key);
    }

    @Override
    public void updateAccumulator(String key, NDList labels, NDList predictions) {
        loss.updateAccumulator(key, labels, predictions);
    }

    @Override
    public void updateAccumulators(String[] keys, NDList labels, NDList predictions) {
        loss.updateAccumulators(keys, labels, predictions);
    }

    @Override
    public void resetAccumulator(String key) {
        loss.resetAccumulator(key);
    }

    @Override
    public float getAccumulator(String key) {
        return loss.getAccumulator(key);
    }
}
