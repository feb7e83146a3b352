package io.kolo.djl;

import ai.djl.Model;
import ai.djl.ndarray.types.Shape;
import ai.djl.nn.Block;
import ai.djl.training.TrainingConfig;
import io.kolo.Communicator;
import io.kolo.Kolo;
import io.kolo.Tensor;
import io.kolo.elastic.Elastic;
import io.kolo.elastic.ElasticState;

import java.util.List;
import java.util.Objects;
import java.util.function.IntFunction;

/**
 * What an elastic DJL training loop must not lose (Horovod's {@code TorchState}): the model's parameters and the
 * position in the data (epoch, batch within the epoch, and the {@link DistributedSampler}'s place in the epoch), kept
 * consistent by {@link Elastic#run} across the launcher's successive jobs.
 *
 * <pre>{@code
 * Kolo.init();
 * DistributedSampler sampler = new DistributedSampler(32, true, 42);
 * ArrayDataset train = new ArrayDataset.Builder().setData(images).optLabels(labels).setSampling(sampler).build();
 * // The config is made per job, for that job's size: a fresh optimizer, the learning rate scaled to the size.
 * IntFunction<TrainingConfig> config = size -> new DefaultTrainingConfig(Loss.softmaxCrossEntropyLoss())
 *         .optOptimizer(Optimizer.adam()
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
 *   <li>{@link #commit()} copies the parameters to the Java heap with the position; {@link #restore()} writes them
 *   back (and zeroes accumulated gradients); {@link #sync()}, when a job starts, gives every rank rank 0's
 *   parameters and position.</li>
 *   <li>After a reset the sampler deals to the new rank and size, and resumes the epoch at the committed position:
 *   the samples all ranks trained before the commit are not trained again, the rest are divided among the new
 *   ranks, none skipped (see {@link DistributedSampler}).</li>
 *   <li>{@link #newTrainer()} builds the trainer for the current job from the config function, called with the job's
 *   size, so a {@link ScaledLearningRate} built there follows the size.</li>
 *   <li><b>Optimizer state is not kept.</b> DJL 0.35 keeps it (Adam's moments, every optimizer's update counts) in
 *   private fields with no API to read or write it. So every job starts every rank with a fresh optimizer from the
 *   config function: the ranks stay identical (a new worker could not get the survivors' moments anyway), at the cost
 *   of the moments being estimated again and a learning-rate warm-up starting again after each reset.</li>
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

    /** With the default {@link DistributedOptions}. */
    public ElasticTrainerState(Model model, DistributedSampler sampler, IntFunction<? extends TrainingConfig> config,
                               Shape... inputShapes) {
        this(model, sampler, config, DistributedOptions.defaults(), inputShapes);
    }

    /**
     * @param model       its block is initialised here (from {@code inputShapes}) if it is not yet, so that there are
     *                    parameters to commit before the first job starts
     * @param sampler     the training dataset's sampler
     * @param config      the training config for a job of the given size; called once per job, so it should build a
     *                    new optimizer each time
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
     * A trainer over the current job ({@link Kolo#communicator()}), with the config made for its size. Make one at the
     * start of each call of the elastic body and close it at its end: after a reset the old one's job is gone.
     */
    public DistributedTrainer newTrainer() {
        Communicator comm = Kolo.communicator();
        return new DistributedTrainer(model, config.apply(comm.size()), comm, options);
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
        savedPosition = new long[]{epoch, batch, consumed};
    }

    @Override
    public void restore() {
        ModelParameters.write(model.getBlock(), savedParameters);
        ModelParameters.zeroGradients(model.getBlock());
        position(savedPosition);
    }

    @Override
    public void sync() {
        if (Kolo.isInitialized()) {
            Communicator comm = Kolo.communicator();
            sampler.reshard(comm.rank(), comm.size());
            if (comm.size() > 1) {
                ModelParameters.broadcast(comm, model.getBlock(), 0, "elastic.param.");
                long[] position = {epoch, batch, consumed};
                comm.broadcastAsync("elastic.position", Tensor.of(position), 0).await();
                position(position);
            }
        }
        sampler.resume(epoch, consumed);
        save();
    }

    private void position(long[] p) {
        epoch = Math.toIntExact(p[0]);
        batch = Math.toIntExact(p[1]);
        consumed = p[2];
        sampler.resume(epoch, consumed);
    }
}
