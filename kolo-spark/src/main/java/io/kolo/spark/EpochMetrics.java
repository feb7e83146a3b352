package io.kolo.spark;

import java.io.Serializable;

/**
 * One epoch of a {@link DjlEstimator#fit}, averaged over the ranks: the training loss, and on the validation rows
 * the loss and the accuracy (the share of rows whose highest output is the label; NaN without validation rows).
 */
public record EpochMetrics(int epoch, double trainLoss, double validationLoss, double validationAccuracy,
                           double seconds) implements Serializable {
    @Override
    public String toString() {
        String validation = Double.isNaN(validationLoss) ? "" : String.format(java.util.Locale.ROOT,
                ", validation loss %.4f, validation accuracy %.2f%%", validationLoss, 100 * validationAccuracy);
        return String.format(java.util.Locale.ROOT, "epoch %d: loss %.4f%s (%.1f s)", epoch, trainLoss, validation,
                seconds);
    }
}
