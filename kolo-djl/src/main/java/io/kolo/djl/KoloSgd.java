package io.kolo.djl;

import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDList;
import ai.djl.training.tracker.ParameterTracker;

/**
 * DJL's {@code Sgd}, with the momentum and update counts in a {@link CommittableOptimizer}: the same learning rate
 * and DJL's own update kernel, so the parameters come out as DJL's.
 */
final class KoloSgd extends CommittableOptimizer {
    private final ParameterTracker learningRate;
    private final float momentum;

    KoloSgd(KoloOptimizers.SgdBuilder builder) {
        super(builder, builder.beginNumUpdate);
        this.learningRate = builder.learningRate;
        this.momentum = builder.momentum;
    }

    @Override
    String kind() {
        return momentum == 0f ? "SGD" : "SGD with momentum";
    }

    @Override
    int slots() {
        return momentum == 0f ? 0 : 1;
    }

    @Override
    public void update(String parameterId, NDArray weight, NDArray grad) {
        float weightDecay = getWeightDecay();
        float lr = learningRate.getNewValue(parameterId, nextUpdate(parameterId));
        NDList inputs = momentum == 0f ? new NDList(weight, grad)
                : new NDList(weight, grad, state(parameterId, weight)[0]);
        weight.getNDArrayInternal().sgdUpdate(inputs, new NDList(weight), lr, weightDecay, rescaleGrad, clipGrad,
                momentum, true);
    }
}
