package io.kolo.djl;

import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDList;
import ai.djl.training.tracker.ParameterTracker;

/**
 * DJL's {@code Adam} and {@code AdamW}, with the moments and update counts in a {@link CommittableOptimizer}: the same
 * bias-corrected learning rate, the same checks and DJL's own update kernel, so the parameters come out as DJL's.
 */
final class KoloAdam extends CommittableOptimizer {
    private final ParameterTracker learningRate;
    private final float beta1;
    private final float beta2;
    private final float epsilon;
    private final boolean decoupledWeightDecay;

    KoloAdam(KoloOptimizers.AdamBuilder builder) {
        super(builder, builder.beginNumUpdate);
        this.learningRate = builder.learningRate;
        this.beta1 = builder.beta1;
        this.beta2 = builder.beta2;
        this.epsilon = builder.epsilon;
        this.decoupledWeightDecay = builder.decoupledWeightDecay;
    }

    @Override
    String kind() {
        return decoupledWeightDecay ? "AdamW" : "Adam";
    }

    @Override
    int slots() {
        return 2;
    }

    @Override
    public void update(String parameterId, NDArray weight, NDArray grad) {
        int t = nextUpdate(parameterId);
        double coef1 = 1.0 - Math.pow(beta1, t);
        double coef2 = 1.0 - Math.pow(beta2, t);
        float lr = learningRate.getNewValue(parameterId, t);
        float corrected = (float) (lr * Math.sqrt(coef2) / coef1);
        float weightDecay = getWeightDecay();
        if (!Float.isFinite(lr) || !Float.isFinite(corrected) || !Float.isFinite(weightDecay)) {
            throw new IllegalArgumentException("learning rate or weight decay is nan or infinite");
        }
        NDArray[] moments = state(parameterId, weight);
        weight.getNDArrayInternal().adamUpdate(new NDList(weight, grad, moments[0], moments[1]), new NDList(weight),
                lr, corrected, weightDecay, rescaleGrad, clipGrad, beta1, beta2, epsilon, true, decoupledWeightDecay);
    }
}
