package io.kolo.djl;

import ai.djl.Model;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDList;
import ai.djl.ndarray.types.Shape;
import ai.djl.nn.Parameter;
import ai.djl.training.Trainer;
import ai.djl.training.TrainingConfig;
import ai.djl.training.loss.Loss;
import ai.djl.util.Pair;
import io.kolo.Communicator;
import io.kolo.DataType;
import io.kolo.Handle;
import io.kolo.Kolo;
import io.kolo.ReduceOp;
import io.kolo.Tensor;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * A DJL {@link Trainer} whose {@link #step()} first averages gradients over every rank of a Kolo job: step 3
 * of the four changes that make a training loop distributed. It is a drop-in replacement for
 * {@code model.newTrainer(config)}, so {@code EasyTrain.fit} and hand-written loops work unchanged.
 *
 * <pre>{@code
 * Trainer trainer = new DistributedTrainer(model, config);   // instead of model.newTrainer(config)
 * trainer.initialize(inputShape);                            // also broadcasts rank 0's parameters
 * }</pre>
 *
 * <p>{@link #initialize} broadcasts the root's freshly initialised parameters (step 4), so every rank starts
 * from the same model; call {@link #broadcastParameters()} again after loading a checkpoint on one rank.
 * Optimizer state needs no broadcast: DJL's optimizers create it lazily from the gradients, which are
 * identical on every rank, and DJL does not save it in checkpoints.
 *
 * <p>One device per rank: pick it with {@link KoloDjl#device()} (by local rank) in the training config.
 *
 * <p>At each optimizer step it reports, for the job view ({@code kolo run --dashboard}), the loss of the last batch
 * ({@code loss}), the config's training metrics when DJL's evaluator listener accumulates them (as in
 * {@code EasyTrain.fit}), and {@code samples/s}, with the step's number (see {@link Communicator#report}); the loss is
 * the one computed through {@link #getLoss()}.
 */
public class DistributedTrainer extends Trainer {
    private final Communicator comm;
    private final DistributedOptions options;
    private final GradientAverager averager;
    private int passes;
    private long allreduceNanos;
    private long allreduces;
    private final ReportedLoss loss;
    private final TrainingReports reports;

    /** Joins the job of {@link Kolo#communicator()} with the default options. */
    public DistributedTrainer(Model model, TrainingConfig config) {
        this(model, config, Kolo.communicator(), DistributedOptions.defaults());
    }

    public DistributedTrainer(Model model, TrainingConfig config, DistributedOptions options) {
        this(model, config, Kolo.communicator(), options);
    }

    public DistributedTrainer(Model model, TrainingConfig config, Communicator comm, DistributedOptions options) {
        super(model, config);
        this.comm = Objects.requireNonNull(comm, "comm");
        this.options = Objects.requireNonNull(options, "options");
        if (options.root() >= comm.size()) {
            throw new IllegalArgumentException("root rank " + options.root() + " is not in a job of " + comm.size()
                    + " ranks");
        }
        if (config.getDevices().length != 1) {
            throw new IllegalArgumentException("a DistributedTrainer uses one device per rank, but the training "
                    + "config lists " + config.getDevices().length + "; use optDevices(new Device[]{KoloDjl.device()})");
        }
        this.averager = new GradientAverager(comm, options);
        this.loss = new ReportedLoss(config.getLossFunction());
        this.reports = new TrainingReports(comm);
    }

    /** The config's loss; the value it computes last before each step is reported as the step's {@code loss}. */
    @Override
    public Loss getLoss() {
        return loss;
    }

    /** Runs the training forward pass as {@link Trainer#forward(NDList)} does, counting the batch's samples. */
    @Override
    public NDList forward(NDList data) {
        countSamples(data);
        return super.forward(data);
    }

    /** Runs the training forward pass as {@link Trainer#forward(NDList, NDList)} does, counting the batch's samples. */
    @Override
    public NDList forward(NDList data, NDList labels) {
        countSamples(data);
        return super.forward(data, labels);
    }

    private void countSamples(NDList data) {
        if (!data.isEmpty() && data.head().getShape().dimension() > 0) {
            reports.samples(data.head().getShape().get(0));
        }
    }

    public Communicator communicator() {
        return comm;
    }

    public DistributedOptions options() {
        return options;
    }

    /** Initialises the parameters as {@link Trainer#initialize} does, then gives every rank the root's. */
    @Override
    public void initialize(Shape... shapes) {
        super.initialize(shapes);
        broadcastParameters();
    }

    /**
     * Counts one backward pass; on every {@code backwardPassesPerStep}-th call averages the accumulated
     * gradients over all ranks and lets the optimizer update the parameters. Every rank must call it equally
     * often (use {@link DistributedSampler} for equal batch counts, or {@link #join()} for the tail).
     */
    @Override
    public void step() {
        passes++;
        if (passes < options.backwardPassesPerStep()) {
            return;   // DJL's PyTorch engine accumulates gradients until the optimizer update zeroes them
        }
        if (options.op() == ReduceOp.ADASUM) {
            adasumStep();
            return;
        }
        long begin = System.nanoTime();
        if (comm.size() > 1 || passes > 1) {
            averager.allreduce(parameters(), passes);
        }
        passes = 0;
        allreduceNanos += System.nanoTime() - begin;
        allreduces++;
        addMetric("allreduce", begin);
        super.step();
        reports.stepped(loss, getEvaluators(), super.getLoss());
    }

    /**
     * Horovod's Adasum optimizer: the optimizer steps on this rank's own gradients (averaged over the accumulated
     * passes), then every parameter becomes its value before the step plus the Adasum of the ranks' steps.
     */
    private void adasumStep() {
        List<Pair<String, Parameter>> trainable = new ArrayList<>();
        for (Pair<String, Parameter> p : parameters()) {
            if (p.getValue().requiresGradient()) {
                trainable.add(p);
            }
        }
        List<NDArray> before = new ArrayList<>(trainable.size());
        for (Pair<String, Parameter> p : trainable) {
            NDArray array = p.getValue().getArray();
            before.add(array.duplicate());
            if (passes > 1) {
                array.getGradient().divi(passes);
            }
        }
        passes = 0;
        super.step();
        long begin = System.nanoTime();
        List<NDArray> deltas = new ArrayList<>(trainable.size());
        List<Handle<Tensor>> handles = new ArrayList<>(trainable.size());
        try {
            for (int i = 0; i < trainable.size(); i++) {
                Pair<String, Parameter> p = trainable.get(i);
                NDArray delta = p.getValue().getArray().sub(before.get(i));
                deltas.add(delta);
                DataType type = GradientAverager.koloType(p.getKey(), delta.getDataType());
                handles.add(comm.allreduceAsync("djl.delta." + p.getKey(),
                        Tensor.of(delta.toByteBuffer(true), type, delta.size()), ReduceOp.ADASUM));
            }
            for (int i = 0; i < trainable.size(); i++) {
                Tensor combined = handles.get(i).await();
                NDArray delta = deltas.get(i);
                ByteBuffer memory = delta.toByteBuffer(true);
                if (java.lang.foreign.MemorySegment.ofBuffer(memory).address() != combined.segment().address()) {
                    delta.set(combined.segment().asByteBuffer());
                }
                trainable.get(i).getValue().getArray().set(before.get(i).addi(delta).toByteBuffer());
            }
        } finally {
            deltas.forEach(NDArray::close);
            before.forEach(NDArray::close);
        }
        allreduceNanos += System.nanoTime() - begin;
        allreduces++;
        addMetric("allreduce", begin);
        reports.stepped(loss, getEvaluators(), super.getLoss());
    }

    /**
     * Total time {@link #step()} has spent averaging gradients (waiting for the slowest rank included), for
     * telling communication from computation; see also {@link #gradientAverages()}.
     */
    public java.time.Duration gradientAveragingTime() {
        return java.time.Duration.ofNanos(allreduceNanos);
    }

    /** How many times gradients were averaged (optimizer steps taken). */
    public long gradientAverages() {
        return allreduces;
    }

    /** Copies the root rank's parameter values into every rank's parameters, matched by name. */
    public void broadcastParameters() {
        broadcastParameters(options.root());
    }

    public void broadcastParameters(int root) {
        ModelParameters.broadcast(comm, getModel().getBlock(), root, "djl.param.");
    }

    /**
     * The average of {@code values} over all ranks, element-wise, in place (e.g. the epoch's loss and accuracy,
     * so rank 0 can report the job's figures rather than its own shard's).
     */
    public double[] averageAcrossRanks(String name, double... values) {
        comm.allreduceAsync("djl.metric." + name, Tensor.of(values), ReduceOp.AVERAGE).await();
        return values;
    }

    /** The sum of {@code values} over all ranks, element-wise, in place (e.g. correct and total counts). */
    public long[] sumAcrossRanks(String name, long... values) {
        comm.allreduceAsync("djl.metric." + name, Tensor.of(values), ReduceOp.SUM).await();
        return values;
    }

    /**
     * This rank has no more batches this epoch: the others' allreduces go on with it contributing zeros until
     * every rank has joined, then every rank takes the parameters of the last rank to join (it stepped last).
     *
     * @return the last rank to join
     */
    public int join() {
        int last = comm.join();
        broadcastParameters(last);
        return last;
    }

    /**
     * A 64-bit hash of every parameter's bytes, by name; equal on every rank when the ranks are in sync.
     */
    public long parameterChecksum() {
        long h = 0xcbf29ce484222325L;
        for (Pair<String, Parameter> p : parameters()) {
            h = h * 31 + p.getKey().hashCode();
            ByteBuffer b = p.getValue().getArray().toByteBuffer(true);
            for (int i = 0; i + 8 <= b.limit(); i += 8) {
                h = (h ^ b.getLong(i)) * 0x100000001b3L;
            }
            for (int i = b.limit() & ~7; i < b.limit(); i++) {
                h = (h ^ b.get(i)) * 0x100000001b3L;
            }
        }
        return h;
    }

    /** Throws naming the ranks that differ when the ranks' parameters are not bit-identical. */
    public void checkParametersInSync() {
        long[] all = comm.allgather(new long[]{parameterChecksum()});
        List<Integer> differ = new ArrayList<>();
        for (int r = 1; r < all.length; r++) {
            if (all[r] != all[0]) {
                differ.add(r);
            }
        }
        if (!differ.isEmpty()) {
            String ranks = differ.size() == 1 ? "rank " + differ.getFirst() + " differs"
                    : "ranks " + differ.toString().replaceAll("[\\[\\]]", "") + " differ";
            throw new IllegalStateException("parameters differ between ranks: " + ranks + " from rank 0 (checksums "
                    + java.util.Arrays.toString(all) + ")");
        }
    }

    private List<Pair<String, Parameter>> parameters() {
        List<Pair<String, Parameter>> out = new ArrayList<>();
        for (Pair<String, Parameter> p : getModel().getBlock().getParameters()) {
            out.add(p);
        }
        return out;
    }
}
