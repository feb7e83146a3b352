package io.kolo.djl;

import ai.djl.Model;
import ai.djl.ndarray.types.Shape;
import ai.djl.nn.Block;
import ai.djl.nn.Parameter;
import ai.djl.training.TrainingConfig;
import ai.djl.training.optimizer.Optimizer;
import ai.djl.util.Pair;
import io.kolo.Communicator;
import io.kolo.Kolo;
import io.kolo.Tensor;
import io.kolo.elastic.Elastic;
import io.kolo.elastic.ElasticState;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.IntFunction;

/**
 * What an elastic DJL training loop must not lose (Horovod's {@code TorchState}): the model's parameters, the
 * optimizer's state and the position in the data (epoch, batch within the epoch, and the {@link DistributedSampler}'s
 * place in the epoch), kept consistent by {@link Elastic#run} across the launcher's successive jobs.
 *
 * <pre>{@code
 * Kolo.init();
 * DistributedSampler sampler = new DistributedSampler(32, true, 42);
 * ArrayDataset train = new ArrayDataset.Builder().setData(images).optLabels(labels).setSampling(sampler).build();
 * // The config is made per job, for that job's size: the learning rate scaled to the size, and an optimizer from
 * // KoloOptimizers, into which the state restores the committed moments and update counts.
 * IntFunction<TrainingConfig> config = size -> new DefaultTrainingConfig(Loss.softmaxCrossEntropyLoss())
 *         .optOptimizer(KoloOptimizers.adam()
 *                 .optLearningRateTracker(new ScaledLearningRate(Tracker.fixed(0.001f), size, 100)).build())
 *         .optDevices(new Device[]{KoloDjl.device()});
 * ElasticTrainerState state = new ElasticTrainerState(model, sampler, config, new Shape(1, 1, 28, 28));
 * Elastic.run(state, s -> {
 *     try (DistributedTrainer trainer = s.newTrainer()) {          // over this job's ranks
 *         while (s.epoch() < 3) {
 *             for (Batch batch : trainer.iterateDataset(train)) {  // resumes the epoch where the commit was
 *                 try (batch; GradientCollector gc = trainer.newGradientCollector()) {
 *                     NDList out = trainer.forward(batch.getData(), batch.getLabels());
 *                     gc.backward(trainer.getLoss().evaluate(batch.getLabels(), out));
 *                 }
 *                 trainer.step();
 *                 s.batchDone();
 *                 if (s.batch() % 10 == 0) {
 *                     s.commit();                                    // a failure from here on comes back here
 *                 }
 *             }
 *             s.epochDone();
 *             s.commit();
 *         }
 *     }
 *     return null;
 * });
 * Kolo.shutdown();
 * }</pre>
 *
 * <ul>
 *   <li>{@link #commit()} copies the parameters and the optimizer's state to the Java heap with the position;
 *   {@link #restore()} writes them back (and zeroes accumulated gradients); {@link #sync()}, when a job starts, gives
 *   every rank rank 0's parameters, optimizer state and position, a worker that joined included.</li>
 *   <li>After a reset the sampler deals to the new rank and size, and resumes the epoch at the committed position:
 *   the samples all ranks trained before the commit are not trained again, the rest are divided among the new
 *   ranks, none skipped (see {@link DistributedSampler}).</li>
 *   <li>{@link #newTrainer()} builds the trainer for the current job from the config function, called with the job's
 *   size, so a {@link ScaledLearningRate} built there follows the size.</li>
 *   <li><b>The optimizer must come from {@link KoloOptimizers}</b> ({@code adam()}, {@code adamW()}, {@code sgd()}):
 *   DJL's own optimizers keep their state (Adam's moments, momentum, the update counts the learning rate follows) in
 *   private fields, so {@link #newTrainer()} refuses them with a one-line error rather than lose it at each reset.
 *   {@link #newTrainer()} writes the state into the new trainer's optimizer, so a run with a reset trains as one
 *   without (up to the order of floating-point sums when the number of ranks changes).</li>
 * </ul>
 *
 * Every rank must call {@link #batchDone()} after each step and {@link #commit()} at the same batches.
 */
public final class ElasticTrainerState extends ElasticState {
    private final Model model;
    private final DistributedSampler sampler;
    private final IntFunction<? extends TrainingConfig> config;
    private final DistributedOptions options;
    private int epoch;
    private int batch;
    private long consumed;
    private List<byte[]> savedParameters;
    private long[] savedPosition;
    private OptimizerState savedOptimizer = OptimizerState.NONE;
    // The optimizer of the trainer newTrainer() made last; its state is the current one.
    private CommittableOptimizer optimizer;

    /** With the default {@link DistributedOptions}. */
    public ElasticTrainerState(Model model, DistributedSampler sampler, IntFunction<? extends TrainingConfig> config,
                               Shape... inputShapes) {
        this(model, sampler, config, DistributedOptions.defaults(), inputShapes);
    }

    /**
     * @param model       its block is initialised here (from {@code inputShapes}) if it is not yet, so that there are
     *                    parameters to commit before the first job starts
     * @param sampler     the training dataset's sampler
     * @param config      the training config for a job of the given size, with an optimizer from {@link
     *                    KoloOptimizers}; called once per job
     * @param options     for the trainers {@link #newTrainer()} makes
     * @param inputShapes the model's input shapes, as for {@code Trainer.initialize}
     */
    public ElasticTrainerState(Model model, DistributedSampler sampler, IntFunction<? extends TrainingConfig> config,
                               DistributedOptions options, Shape... inputShapes) {
        this.model = Objects.requireNonNull(model, "model");
        this.sampler = Objects.requireNonNull(sampler, "sampler");
        this.config = Objects.requireNonNull(config, "config");
        this.options = Objects.requireNonNull(options, "options");
        Block block = Objects.requireNonNull(model.getBlock(), "the model has no block: call model.setBlock first");
        if (!block.isInitialized()) {
            if (inputShapes.length == 0) {
                throw new IllegalArgumentException("the model's block is not initialised: pass its input shapes");
            }
            block.initialize(model.getNDManager(), model.getDataType(), inputShapes);
        }
        // After a re-join the sampler deals to the new job's ranks.
        registerResetCallback(() -> sampler.reshard(Kolo.rank(), Kolo.size()));
        save();
    }

    /**
     * A trainer over the current job ({@link Kolo#communicator()}), with the config made for its size and the
     * optimizer state written into the config's optimizer. Make one at the start of each call of the elastic body,
     * train with it and close it at its end: after a reset the old one's job is gone, and its optimizer is released.
     *
     * @throws IllegalArgumentException when the config's optimizer is not from {@link KoloOptimizers}
     */
    public DistributedTrainer newTrainer() {
        Communicator comm = Kolo.communicator();
        TrainingConfig made = config.apply(comm.size());
        CommittableOptimizer next = committable(made.getOptimizer());
        next.load(optimizerState(), parameterIds());
        DistributedTrainer trainer = new DistributedTrainer(model, made, comm, options);
        if (optimizer != null && optimizer != next) {
            optimizer.release();
        }
        optimizer = next;
        return trainer;
    }

    private static CommittableOptimizer committable(Optimizer optimizer) {
        if (optimizer instanceof CommittableOptimizer c) {
            return c;
        }
        String name = optimizer == null ? "none" : optimizer.getClass().getSimpleName();
        String instead = switch (name) {
            case "Adam" -> "KoloOptimizers.adam()";
            case "AdamW" -> "KoloOptimizers.adamW()";
            case "Sgd" -> "KoloOptimizers.sgd()";
            default -> "KoloOptimizers.adam(), adamW() or sgd()";
        };
        throw new IllegalArgumentException("ElasticTrainerState cannot commit the state of the training config's "
                + "optimizer (" + name + "): DJL's optimizers keep it private, so a reset would lose it; build it with "
                + instead + ", which makes the same update with state a commit keeps");
    }

    /** The epoch being trained, from 0. */
    public int epoch() {
        return epoch;
    }

    /** Steps taken in this epoch (each rank one batch per step), across resets. */
    public int batch() {
        return batch;
    }

    /** Samples of this epoch that every rank together has trained, across resets. */
    public long consumed() {
        return consumed;
    }

    /** Records one step: every rank has trained one more batch of the epoch. */
    public void batchDone() {
        consumed = sampler.consumedAfter(consumed, 1);
        batch++;
    }

    /** Records the end of the epoch: the next one starts at its first sample. */
    public void epochDone() {
        epoch++;
        batch = 0;
        consumed = 0;
        sampler.resume(epoch, 0);
    }

    @Override
    public void save() {
        savedParameters = ModelParameters.copy(model.getBlock());
        savedOptimizer = optimizerState();
        savedPosition = new long[]{epoch, batch, consumed};
    }

    @Override
    public void restore() {
        ModelParameters.write(model.getBlock(), savedParameters);
        ModelParameters.zeroGradients(model.getBlock());
        if (optimizer != null) {
            optimizer.load(savedOptimizer, parameterIds());
        }
        position(savedPosition);
    }

    @Override
    public void sync() {
        if (Kolo.isInitialized()) {
            Communicator comm = Kolo.communicator();
            sampler.reshard(comm.rank(), comm.size());
            if (comm.size() > 1) {
                ModelParameters.broadcast(comm, model.getBlock(), 0, "elastic.param.");
                OptimizerState synced = OptimizerState.broadcast(comm, optimizerState(), 0, "elastic.optimizer.");
                if (optimizer != null) {
                    optimizer.load(synced, parameterIds());
                } else {
                    savedOptimizer = synced;
                }
                long[] position = {epoch, batch, consumed};
                comm.broadcastAsync("elastic.position", Tensor.of(position), 0).await();
                position(position);
            }
        }
        sampler.resume(epoch, consumed);
        save();
    }

    /** The optimizer's state now: the last trainer's optimizer's, or the committed one before the first trainer. */
    private OptimizerState optimizerState() {
        if (optimizer == null) {
            return savedOptimizer;
        }
        Map<String, String> names = new HashMap<>();
        for (Pair<String, Parameter> p : ModelParameters.of(model.getBlock())) {
            names.put(p.getValue().getId(), p.getKey());
        }
        return optimizer.copy(names);
    }

    private Map<String, String> parameterIds() {
        Map<String, String> ids = new HashMap<>();
        for (Pair<String, Parameter> p : ModelParameters.of(model.getBlock())) {
            ids.put(p.getKey(), p.getValue().getId());
        }
        return ids;
    }

    private void position(long[] p) {
        epoch = Math.toIntExact(p[0]);
        batch = Math.toIntExact(p[1]);
        consumed = p[2];
        sampler.resume(epoch, consumed);
    }
}
