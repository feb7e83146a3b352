package io.kolo.djl;

import ai.djl.training.tracker.Tracker;

/**
 * A learning rate scaled by the number of ranks with a linear warm-up (Goyal et al., "Accurate, Large
 * Minibatch SGD"): the global batch is {@code size} times larger, so the rate is too, reached gradually over
 * the first {@code warmupUpdates} optimizer updates from the single-rank rate.
 *
 * <pre>{@code
 * Optimizer sgd = Optimizer.sgd()
 *         .setLearningRateTracker(new ScaledLearningRate(Tracker.fixed(0.01f), Kolo.size(), 100))
 *         .build();
 * }</pre>
 */
public final class ScaledLearningRate implements Tracker {
    private final Tracker base;
    private final int size;
    private final int warmupUpdates;

    /**
     * @param base          the single-rank schedule
     * @param size          the factor, usually {@code Kolo.size()}
     * @param warmupUpdates updates over which the factor grows from 1 to {@code size}; 0 for none
     */
    public ScaledLearningRate(Tracker base, int size, int warmupUpdates) {
        if (size < 1) {
            throw new IllegalArgumentException("size must be >= 1, not " + size);
        }
        if (warmupUpdates < 0) {
            throw new IllegalArgumentException("warm-up updates must be >= 0, not " + warmupUpdates);
        }
        this.base = java.util.Objects.requireNonNull(base, "base");
        this.size = size;
        this.warmupUpdates = warmupUpdates;
    }

    @Override
    public float getNewValue(int numUpdate) {
        double factor = size;
        if (numUpdate < warmupUpdates) {
            factor = 1 + (size - 1) * (double) numUpdate / warmupUpdates;
        }
        return (float) (base.getNewValue(numUpdate) * factor);
    }
}
