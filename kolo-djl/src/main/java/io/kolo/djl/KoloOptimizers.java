package io.kolo.djl;

import ai.djl.training.optimizer.Optimizer;
import ai.djl.training.tracker.ParameterTracker;
import ai.djl.training.tracker.Tracker;

import java.util.Objects;

/**
 * DJL's optimizers with state that an elastic job keeps: {@link ElasticTrainerState} commits their moments and update
 * counts with the parameters, restores them after a failure and gives them to a worker that joins, as Horovod commits
 * {@code optimizer.state_dict()}. They are built as DJL's are, take the same settings and make the same update with
 * DJL's own kernels, so a loop loses nothing by switching:
 *
 * <pre>{@code
 * Optimizer adam = KoloOptimizers.adam()                      // instead of Optimizer.adam()
 *         .optLearningRateTracker(new ScaledLearningRate(Tracker.fixed(0.001f), size, 100))
 *         .build();
 * Optimizer sgd = KoloOptimizers.sgd().setLearningRateTracker(Tracker.fixed(0.1f)).optMomentum(0.9f).build();
 * }</pre>
 *
 * These are the optimizers DJL's PyTorch engine implements (its {@code Nag}, {@code RmsProp}, {@code Adagrad} and
 * {@code Adadelta} updates are not implemented there). Outside an elastic job they work like DJL's.
 */
public final class KoloOptimizers {
    private KoloOptimizers() {
    }

    /** DJL's {@code Optimizer.adam()}: learning rate 0.001, beta1 0.9, beta2 0.999, epsilon 1e-8. */
    public static AdamBuilder adam() {
        return new AdamBuilder(false);
    }

    /** DJL's {@code Optimizer.adamW()}: Adam with decoupled weight decay, 0.01 unless set. */
    public static AdamBuilder adamW() {
        return new AdamBuilder(true).optWeightDecays(0.01f);
    }

    /** DJL's {@code Optimizer.sgd()}: a learning rate must be set; momentum 0 unless set. */
    public static SgdBuilder sgd() {
        return new SgdBuilder();
    }

    /** Builds Adam or AdamW, with the settings of DJL's {@code Adam.Builder}. */
    public static final class AdamBuilder extends Optimizer.OptimizerBuilder<AdamBuilder> {
        final boolean decoupledWeightDecay;
        ParameterTracker learningRate = Tracker.fixed(0.001f);
        float beta1 = 0.9f;
        float beta2 = 0.999f;
        float epsilon = 1e-8f;
        int beginNumUpdate;

        private AdamBuilder(boolean decoupledWeightDecay) {
            this.decoupledWeightDecay = decoupledWeightDecay;
        }

        @Override
        protected AdamBuilder self() {
            return this;
        }

        /** The learning rate by update count (0.001 unless set), before Adam's bias correction. */
        public AdamBuilder optLearningRateTracker(ParameterTracker learningRate) {
            this.learningRate = Objects.requireNonNull(learningRate, "learningRate");
            return this;
        }

        /** The decay rate of the first moment estimates. */
        public AdamBuilder optBeta1(float beta1) {
            this.beta1 = beta1;
            return this;
        }

        /** The decay rate of the second moment estimates. */
        public AdamBuilder optBeta2(float beta2) {
            this.beta2 = beta2;
            return this;
        }

        /** Added to the root of the second moment for numerical stability. */
        public AdamBuilder optEpsilon(float epsilon) {
            this.epsilon = epsilon;
            return this;
        }

        @Override
        public AdamBuilder optBeginNumUpdate(int beginNumUpdate) {
            this.beginNumUpdate = beginNumUpdate;
            return super.optBeginNumUpdate(beginNumUpdate);
        }

        /** The optimizer, for {@code DefaultTrainingConfig.optOptimizer}. */
        public Optimizer build() {
            return new KoloAdam(this);
        }
    }

    /** Builds SGD, with the settings of DJL's {@code Sgd.Builder}. */
    public static final class SgdBuilder extends Optimizer.OptimizerBuilder<SgdBuilder> {
        ParameterTracker learningRate;
        float momentum;
        int beginNumUpdate;

        private SgdBuilder() {
        }

        @Override
        protected SgdBuilder self() {
            return this;
        }

        /** The learning rate by update count; required. */
        public SgdBuilder setLearningRateTracker(ParameterTracker learningRate) {
            this.learningRate = Objects.requireNonNull(learningRate, "learningRate");
            return this;
        }

        /** The momentum, 0 (none) unless set. */
        public SgdBuilder optMomentum(float momentum) {
            this.momentum = momentum;
            return this;
        }

        @Override
        public SgdBuilder optBeginNumUpdate(int beginNumUpdate) {
            this.beginNumUpdate = beginNumUpdate;
            return super.optBeginNumUpdate(beginNumUpdate);
        }

        /** The optimizer, for {@code DefaultTrainingConfig.optOptimizer}. */
        public Optimizer build() {
            if (learningRate == null) {
                throw new IllegalStateException("KoloOptimizers.sgd() needs a learning rate: call "
                        + "setLearningRateTracker(Tracker.fixed(0.1f)), say, before build()");
            }
            return new KoloSgd(this);
        }
    }
}
