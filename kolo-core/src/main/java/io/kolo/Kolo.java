package io.kolo;

import io.kolo.bootstrap.ElasticScope;
import io.kolo.view.MetricPoints;

import java.util.List;

/**
 * The usual one-rank-per-process entry point, as {@code horovod.torch as hvd}:
 *
 * <pre>{@code
 * Kolo.init();                                   // 1. join the job (from KOLO_* / mpirun / Slurm variables)
 * int threads = ...; // 2. pin work to Kolo.localRank()
 * float[] grad = computeGradient();
 * Kolo.allreduce(grad, ReduceOp.AVERAGE);        // 3. average gradients over all ranks
 * Kolo.broadcast(weights, 0);                    // 4. start every rank from rank 0's weights
 * Kolo.shutdown();
 * }</pre>
 *
 * Run it with {@code ./kolo run -np 4 -cp app.jar Main}. Everything here delegates to one
 * {@link Communicator}, whose {@link Collectives} (async ops, grouped allreduce, compression, alltoall) are
 * {@link #communicator()}'s; {@link #on(ProcessSet)} gives those of a process set.
 */
public final class Kolo {
    private static final String NOT_INITIALISED = "Kolo is not initialised: call Kolo.init() first";
    private static volatile Communicator current;
    /** The program's metric points: kept from before {@link #init()} and across an elastic job's communicators. */
    private static final MetricPoints POINTS = new MetricPoints();
    /** Jobs this process joined through the facade (an elastic worker joins one per reset). */
    private static int joins;

    private Kolo() {
    }

    /**
     * Joins the job described by this process's environment. Calling it again while initialised does nothing.
     *
     * <p>A {@code KOLO_*} variable with a value Kolo cannot use, or one a rank started by mpirun or srun needs and
     * lacks (the rendezvous host of a job across hosts, a secret), ends this process: it prints one line naming the
     * variable and what is expected on stderr and exits with code 2, as a launcher does for a bad flag (every rank
     * of a job usually has the same setting, and a stack trace per rank says no more). Programs that want to handle
     * it themselves use {@link Communicator#fromEnvironment()}, which throws {@link BadSettingException}.
     *
     * <p>In an elastic job, a worker whose job cannot form (a peer lost while it starts, the start timeout) waits here
     * for the launcher's next job and joins that, as the workers already inside {@code Elastic.run} do.
     */
    public static synchronized void init() {
        init(new ProcessSet[0]);
    }

    /**
     * Joins the job and registers static process sets, as Horovod's {@code hvd.init(process_sets=[...])}: every rank
     * passes the same sets, members or not; each gets its id (1, 2, ... in order) and is usable on return. Once
     * initialised, a call does nothing, and refuses sets that it did not register then.
     *
     * <pre>{@code
     * ProcessSet even = ProcessSet.of(0, 2), odd = ProcessSet.of(1, 3);
     * Kolo.init(even, odd);
     * Kolo.on(Kolo.rank() % 2 == 0 ? even : odd).allreduce(x, ReduceOp.SUM);
     * }</pre>
     */
    public static synchronized void init(ProcessSet... processSets) {
        if (current == null) {
            try {
                current = joined(Communicator.fromEnvironment(System.getenv(), processSets));
                ElasticScope.joined(System.getenv());
            } catch (BadSettingException e) {
                System.err.println("kolo: " + e.getMessage());
                System.err.flush();
                System.exit(2);
            } catch (RuntimeException e) {
                // An elastic worker started into a job that cannot form joins the launcher's next one instead.
                ElasticScope.recoverStart(System.getenv(), e);
            }
            return;
        }
        for (ProcessSet s : processSets) {
            // Ignored, a set given again later only failed at its first collective, saying to pass it to Kolo.init.
            if (s.owner() != current) {
                throw new IllegalStateException("Kolo is already initialised, so " + s + " given to this Kolo.init"
                        + " is not registered: pass every process set to the first Kolo.init(...), or add it with"
                        + " Kolo.communicator().addProcessSet(...) (KOLO_DYNAMIC_PROCESS_SETS=1)");
            }
        }
    }

    /**
     * Joins the job {@code env} describes instead of this process's environment; nothing happens when already
     * initialised. {@code io.kolo.elastic} re-joins with it after a reset, with the placement the launcher published
     * for the new job:
     *
     * <pre>{@code
     * Kolo.shutdown();
     * Kolo.init(newPlacement);     // KOLO_RANK, KOLO_SIZE, ... of the launcher's next job
     * }</pre>
     *
     * @throws BadSettingException naming the variable when a setting is malformed
     */
    public static synchronized void init(java.util.Map<String, String> env) {
        if (current == null) {
            current = joined(Communicator.fromEnvironment(env));
            ElasticScope.joined(env);
        }
    }

    private static Communicator joined(Communicator c) {
        c.adopt(POINTS, joins++);
        return c;
    }

    /**
     * Reports this rank's value of a metric now (a loss, an accuracy, samples per second) for the job view
     * ({@code kolo run --dashboard}, {@code --report}). See {@link #report(String, double, long)}.
     */
    public static void report(String name, double value) {
        POINTS.add(name, value, -1);
    }

    /**
     * Reports this rank's value of a metric at training step {@code step} (-1: none) for the job view, which charts
     * each name per rank; {@code "progress"}, a fraction from 0 to 1 of the whole job, gives the job's percentage and
     * remaining time. It never blocks, never communicates on the calling thread and allocates nothing: the point goes
     * into a ring of this process's newest 256, which a background thread publishes every
     * {@code KOLO_VIEW_INTERVAL_MS} while the view is on ({@code KOLO_VIEW=1}, set by {@code kolo run --dashboard}).
     * Points reported before {@link #init()} are kept and published once the rank joins; with the view off they are
     * only kept. An elastic worker's points and their numbering go on across resets.
     *
     * <pre>{@code
     * for (long step = 0; step < steps; step++) {
     *     double loss = trainStep();
     *     Kolo.report("loss", loss, step);
     *     Kolo.report("progress", (step + 1) / (double) steps);
     * }
     * }</pre>
     *
     * @throws IllegalArgumentException when {@code name} is null or blank
     */
    public static void report(String name, double value, long step) {
        POINTS.add(name, value, step);
    }

    /** Whether {@link #init()} was called and {@link #shutdown()} not since. */
    public static boolean isInitialized() {
        return current != null;
    }

    /** Leaves the job; the other ranks' engines stop too. Safe to call when not initialised. */
    public static synchronized void shutdown() {
        Communicator c = current;
        current = null;
        ElasticScope.left();
        if (c != null) {
            c.close();
        }
    }

    /** The communicator behind the facade. */
    public static Communicator communicator() {
        Communicator c = current;
        if (c == null) {
            throw new IllegalStateException(NOT_INITIALISED);
        }
        return c;
    }

    /**
     * The communicator for a collective of this facade. In an elastic job a collective outside {@code Elastic.run} is
     * refused (see {@link ElasticScope} for why); the check is one field read, no allocation.
     */
    private static Communicator collective() {
        Communicator c = current;
        if (c == null || ElasticScope.refusing()) {
            throw new IllegalStateException(c == null ? NOT_INITIALISED : ElasticScope.REFUSED);
        }
        return c;
    }

    /** This rank, 0..size()-1. */
    public static int rank() {
        return communicator().rank();
    }

    /** How many ranks the job has. */
    public static int size() {
        return communicator().size();
    }

    /** This rank's rank among the ranks of its host. */
    public static int localRank() {
        return communicator().localRank();
    }

    /** How many ranks run on this rank's host. */
    public static int localSize() {
        return communicator().localSize();
    }

    /** The rank of this rank's host among the hosts that run its local rank. */
    public static int crossRank() {
        return communicator().crossRank();
    }

    /** How many hosts run a rank of this local rank. */
    public static int crossSize() {
        return communicator().crossSize();
    }

    /** {@link Collectives#allreduce(float[], ReduceOp)}, among every rank. */
    public static float[] allreduce(float[] data, ReduceOp op) {
        return collective().allreduce(data, op);
    }

    /** {@link Collectives#allreduce(double[], ReduceOp)}, among every rank. */
    public static double[] allreduce(double[] data, ReduceOp op) {
        return collective().allreduce(data, op);
    }

    /** {@link Collectives#allreduce(int[], ReduceOp)}, among every rank. */
    public static int[] allreduce(int[] data, ReduceOp op) {
        return collective().allreduce(data, op);
    }

    /** {@link Collectives#allreduce(long[], ReduceOp)}, among every rank. */
    public static long[] allreduce(long[] data, ReduceOp op) {
        return collective().allreduce(data, op);
    }

    /** {@link Collectives#allreduce(Tensor, ReduceOp)}, among every rank. */
    public static Tensor allreduce(Tensor tensor, ReduceOp op) {
        return collective().allreduce(tensor, op);
    }

    /**
     * In place and named (see {@link Communicator#allreduce(String, Tensor, ReduceOp)}): a small allreduce repeated
     * under one name costs one exchange of messages.
     *
     * <pre>{@code
     * float[] loss = {batchLoss};
     * Kolo.allreduce("loss", loss, ReduceOp.AVERAGE);
     * }</pre>
     */
    public static float[] allreduce(String name, float[] data, ReduceOp op) {
        collective().allreduce(name, Tensor.of(data), op);
        return data;
    }

    /** In place and named, as {@link #allreduce(String, float[], ReduceOp)}. */
    public static double[] allreduce(String name, double[] data, ReduceOp op) {
        collective().allreduce(name, Tensor.of(data), op);
        return data;
    }

    /** {@link Collectives#allreduce(String, Tensor, ReduceOp)}, among every rank. */
    public static Tensor allreduce(String name, Tensor tensor, ReduceOp op) {
        return collective().allreduce(name, tensor, op);
    }

    /** {@link Collectives#allreduceAsync(String, Tensor, ReduceOp)}, among every rank. */
    public static Handle<Tensor> allreduceAsync(String name, Tensor tensor, ReduceOp op) {
        return collective().allreduceAsync(name, tensor, op);
    }

    /**
     * In place, sent and reduced as 16-bit floats (Horovod's {@code compression=Compression.fp16}):
     * {@code Kolo.allreduce(grad, ReduceOp.AVERAGE, Compression.BF16)}. See {@link Compression} for the trade-off.
     */
    public static float[] allreduce(float[] data, ReduceOp op, Compression compression) {
        return collective().allreduce(data, op, compression);
    }

    /** {@link Collectives#allreduce(double[], ReduceOp, Compression)}, among every rank. */
    public static double[] allreduce(double[] data, ReduceOp op, Compression compression) {
        return collective().allreduce(data, op, compression);
    }

    /** {@link Collectives#allreduce(Tensor, ReduceOp, Compression)}, among every rank. */
    public static Tensor allreduce(Tensor tensor, ReduceOp op, Compression compression) {
        return collective().allreduce(tensor, op, compression);
    }

    /** {@link Collectives#allreduceAsync(String, Tensor, ReduceOp, Compression)}, among every rank. */
    public static Handle<Tensor> allreduceAsync(String name, Tensor tensor, ReduceOp op, Compression compression) {
        return collective().allreduceAsync(name, tensor, op, compression);
    }

    /** {@link Collectives#allgather(float[])}, among every rank. */
    public static float[] allgather(float[] data) {
        return collective().allgather(data);
    }

    /** {@link Collectives#allgather(Tensor)}, among every rank. */
    public static Tensor allgather(Tensor tensor) {
        return collective().allgather(tensor);
    }

    /** Every rank's array, in rank order, into {@code output}, which the caller keeps (no allocation per call). */
    public static float[] allgatherInto(float[] data, float[] output) {
        return collective().allgatherInto(data, output);
    }

    /** Every rank's tensor, concatenated along the first dimension, into {@code output}, which the caller keeps. */
    public static Tensor allgatherInto(Tensor tensor, Tensor output) {
        return collective().allgatherInto(tensor, output);
    }

    /** Named, into {@code output} (see {@link Communicator#allgatherInto(String, Tensor, Tensor)}). */
    public static Tensor allgatherInto(String name, Tensor tensor, Tensor output) {
        return collective().allgatherInto(name, tensor, output);
    }

    /** {@link Collectives#broadcast(float[], int)}, among every rank. */
    public static float[] broadcast(float[] data, int root) {
        return collective().broadcast(data, root);
    }

    /** {@link Collectives#broadcast(Tensor, int)}, among every rank. */
    public static Tensor broadcast(Tensor tensor, int root) {
        return collective().broadcast(tensor, root);
    }

    /** Named and in place (see {@link Communicator#broadcast(String, Tensor, int)}). */
    public static Tensor broadcast(String name, Tensor tensor, int root) {
        return collective().broadcast(name, tensor, root);
    }

    /** {@link Collectives#alltoall(Tensor, long[])}, among every rank. */
    public static AlltoallResult alltoall(Tensor tensor, long[] splits) {
        return collective().alltoall(tensor, splits);
    }

    /** {@link Collectives#reducescatter(Tensor, ReduceOp)}, among every rank. */
    public static Tensor reducescatter(Tensor tensor, ReduceOp op) {
        return collective().reducescatter(tensor, op);
    }

    /** {@link Collectives#barrier()}, among every rank. */
    public static void barrier() {
        collective().barrier();
    }

    /** {@link Collectives#join()}, among every rank. */
    public static int join() {
        return collective().join();
    }

    /** {@link Collectives#broadcastObject(java.io.Serializable, int)}, among every rank. */
    public static <T extends java.io.Serializable> T broadcastObject(T object, int root) {
        return collective().broadcastObject(object, root);
    }

    /** {@link Collectives#allgatherObject(java.io.Serializable)}, among every rank. */
    public static <T extends java.io.Serializable> List<T> allgatherObject(T object) {
        return collective().allgatherObject(object);
    }

    /** Adds a process set while the job runs (needs {@code KOLO_DYNAMIC_PROCESS_SETS=1}); see {@link Communicator#addProcessSet}. */
    public static ProcessSet addProcessSet(int... ranks) {
        return collective().addProcessSet(ranks);
    }

    /** Removes a process set while the job runs; see {@link Communicator#removeProcessSet}. */
    public static void removeProcessSet(ProcessSet set) {
        collective().removeProcessSet(set);
    }

    /** The set of every rank (id 0). */
    public static ProcessSet globalProcessSet() {
        return communicator().globalProcessSet();
    }

    /**
     * The collectives of a process set (Horovod's {@code process_set=} argument); only its members call them, and a
     * broadcast's root is a job rank. See {@link Communicator#on(ProcessSet)}. In an elastic job {@code on} is refused
     * outside {@code Elastic.run}, as the facade's collectives are; the {@link Collectives} it returns are the
     * communicator's, which do not check that again, so take them inside {@code Elastic.run} and use them there.
     *
     * <pre>{@code
     * Kolo.on(trainers).allreduce(gradients, ReduceOp.AVERAGE);   // only the trainers take part
     * }</pre>
     */
    public static Collectives on(ProcessSet set) {
        return collective().on(set);
    }
}
