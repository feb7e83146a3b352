package io.kolo.spark;

import ai.djl.training.DefaultTrainingConfig;
import ai.djl.training.tracker.Tracker;

import java.io.Serializable;

/**
 * Makes the loss and optimizer of a {@link DjlEstimator}'s training on every rank. {@code learningRate} is the
 * estimator's rate, already scaled by the number of ranks when {@link DjlEstimator#scaleLearningRate} says so; the
 * estimator sets the device itself.
 *
 * <pre>{@code
 * TrainingConfigFactory adam = lr -> new DefaultTrainingConfig(Loss.softmaxCrossEntropyLoss())
 *         .optOptimizer(Optimizer.adam().optLearningRateTracker(lr).build());
 * }</pre>
 */
@FunctionalInterface
public interface TrainingConfigFactory extends Serializable {
    DefaultTrainingConfig create(Tracker learningRate);
}
