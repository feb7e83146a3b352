package io.kolo;

import io.kolo.engine.Engine;
import io.kolo.engine.Op;
import io.kolo.engine.OpKind;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import java.util.function.Function;

/**
 * The collectives of one process set as one rank sees them: the set's ranks renumbered 0..k-1 in ascending job-rank
 * order, as an MPI sub-communicator. Builds each op, tags it with the set and submits it to the engine; the
 * {@link Communicator} holds one for the global set and one per set this rank belongs to.
 */
final class SetCollectives {
    private final Engine engine;
    private final int set;
    private final int rank;
    private final int size;
    private final BooleanSupplier closed;
    private final int jobRank;
    private final AllreduceOps allreduces;
    private final Handle.Driver driver;
    /** What a timed-out op of this set still waits for (one function for every handle: nothing allocated per op). */
    private final java.util.function.Function<String, String> waitingFor;
    private final AtomicLong groupCounter = new AtomicLong();

    /**
     * @param rank   this rank's rank in the set
     * @param closed whether the communicator was closed (ops are refused then)
     */
    SetCollectives(Engine engine, int set, int rank, int size, int jobRank, BooleanSupplier closed) {
        this.engine = engine;
        this.set = set;
        this.rank = rank;
        this.size = size;
        this.jobRank = jobRank;
        this.closed = closed;
        this.allreduces = new AllreduceOps(size);
        this.driver = engine::drive;
        this.waitingFor = n -> engine.waitingFor(set, n);
    }

    /** This rank's rank in the set. */
    int rank() {
        return rank;
    }

    int size() {
        return size;
    }

    /** The compression of allreduces that name none ({@code KOLO_COMPRESSION}). */
    Compression defaultCompression() {
        return engine.settings().compression();
    }

    // ---- allreduce

    Tensor allreduce(Tensor tensor, ReduceOp op) {
        return allreduceAsync(null, tensor, op).await();
    }

    Tensor allreduce(Tensor tensor, ReduceOp op, Compression compression) {
        return allreduceAsync(null, tensor, op, 1.0, 1.0, compression).await();
    }

    /**
     * Blocking and named: a small allreduce repeated under its name runs on this thread in the engine's next cycle,
     * with no op or handle ({@link Engine#allreduceNow}); anything else is submitted and awaited.
     */
    Tensor allreduce(String name, Tensor tensor, ReduceOp op, double prescale, double postscale) {
        Compression compression = engine.settings().compression();
        if (name != null && !closed.getAsBoolean() && compression.wireType(tensor.dataType()) == null
                && engine.allreduceNow(set, name, tensor.dataType(), tensor.shapeShared(), tensor.segment(), op,
                prescale, postscale)) {
            return tensor;
        }
        return allreduceAsync(name, tensor, op, prescale, postscale, compression).await();
    }

    Handle<Tensor> allreduceAsync(String name, Tensor tensor, ReduceOp op) {
        return allreduceAsync(name, tensor, op, 1.0, 1.0, engine.settings().compression());
    }

    Handle<Tensor> allreduceAsync(String name, Tensor tensor, ReduceOp op, double prescale, double postscale,
                                  Compression compression) {
        requireWritable(tensor, "allreduce", name);
        AllreduceOps.Allreduce a = allreduces.of(name, tensor, op, prescale, postscale, compression);
        return submit(a.op(), x -> a.finish(tensor));
    }

    Handle<List<Tensor>> groupedAllreduceAsync(String name, List<Tensor> tensors, ReduceOp op,
                                               Compression compression) {
        if (tensors.isEmpty()) {
            throw new IllegalArgumentException("grouped allreduce needs at least one tensor");
        }
        for (Tensor t : tensors) {
            requireWritable(t, "grouped allreduce", name);
        }
        String group = name != null ? name : "grouped_allreduce.noname." + groupCounter.incrementAndGet();
        List<Handle<Tensor>> handles = new ArrayList<>();
        for (int i = 0; i < tensors.size(); i++) {
            Tensor t = tensors.get(i);
            AllreduceOps.Allreduce a = allreduces.of(group + "." + i, t, op, 1.0, 1.0, compression);
            Op member = name != null ? a.op().group(group, tensors.size()) : a.op().unnamedGroup(group, tensors.size());
            handles.add(submit(member, x -> a.finish(t)));
        }
        Handle<List<Tensor>> all = new Handle<>(group, engine.settings().timeout());
        all.explainedBy(n -> engine.waitingFor(set, n + ".0"));
        all.drivenBy((done, now, deadline) -> engine.drive(() -> handles.getLast().poll() || done.getAsBoolean(),
                now, deadline));
        Thread.ofVirtual().start(() -> {
            try {
                List<Tensor> out = new ArrayList<>();
                for (Handle<Tensor> h : handles) {
                    out.add(h.await());
                }
                all.complete(out);
            } catch (RuntimeException e) {
                all.fail(e);
            }
        });
        return all;
    }

    // ---- allgather

    Tensor allgather(Tensor tensor) {
        return allgatherAsync(null, tensor).await();
    }

    Handle<Tensor> allgatherAsync(String name, Tensor tensor) {
        requireRank(tensor, "allgather");
        Tensor[] out = new Tensor[1];
        Op o = Op.of(OpKind.ALLGATHER, name, tensor.dataType(), tensor.shapeShared(), tensor.segment())
                .outputs(shape -> (out[0] = Tensor.allocateLike(tensor, tensor.dataType(), shape)).segment());
        return submit(o, x -> out[0]);
    }

    Tensor allgatherInto(Tensor tensor, Tensor output) {
        return allgatherIntoAsync(null, tensor, output).await();
    }

    /**
     * Blocking and named: a small allgather repeated under its name, into an output that holds exactly its result,
     * runs on this thread in the engine's next cycle with no op or handle ({@link Engine#allgatherNow}); anything else
     * is submitted and awaited.
     */
    Tensor allgatherInto(String name, Tensor tensor, Tensor output) {
        if (name != null && output != null && !closed.getAsBoolean() && output.dataType() == tensor.dataType()
                && !output.segment().isReadOnly()
                && engine.allgatherNow(set, name, tensor.dataType(), tensor.shapeShared(), tensor.segment(),
                output.segment())) {
            return output;
        }
        return allgatherIntoAsync(name, tensor, output).await();
    }

    Handle<Tensor> allgatherIntoAsync(String name, Tensor tensor, Tensor output) {
        requireRank(tensor, "allgather");
        java.util.Objects.requireNonNull(output, "output");
        Op o = Op.of(OpKind.ALLGATHER, name, tensor.dataType(), tensor.shapeShared(), tensor.segment())
                .into(output.segment(), shape -> misfit(output, tensor.dataType(), shape));
        return submit(o, x -> output);
    }

    /** Why {@code output} cannot hold an allgather result of {@code type} and {@code shape}, or null. */
    static String misfit(Tensor output, DataType type, long[] shape) {
        long elements = 1;
        for (long d : shape) {
            elements *= d;
        }
        if (output.dataType() != type) {
            return "the output tensor is " + output.dataType() + " but the gathered tensors are " + type
                    + "; pass an output of " + type;
        }
        if (output.elements() != elements) {
            return "the output tensor has " + output.elements() + " elements but the result has " + elements
                    + " (shape " + java.util.Arrays.toString(shape) + "); pass an output of that many elements";
        }
        if (output.segment().isReadOnly()) {
            return "the output tensor is read-only; pass writable memory";
        }
        return null;
    }

    // ---- broadcast

    /** @param root the root's rank in this set */
    Tensor broadcast(Tensor tensor, int root) {
        return broadcastAsync(null, tensor, root).await();
    }

    /**
     * Blocking and named: a small broadcast repeated under its name runs on this thread in the engine's next cycle with
     * no op or handle ({@link Engine#broadcastNow}); anything else is submitted and awaited.
     */
    Tensor broadcast(String name, Tensor tensor, int root) {
        if (name != null && !closed.getAsBoolean()
                && engine.broadcastNow(set, name, tensor.dataType(), tensor.shapeShared(), tensor.segment(), root)) {
            return tensor;
        }
        return broadcastAsync(name, tensor, root).await();
    }

    Handle<Tensor> broadcastAsync(String name, Tensor tensor, int root) {
        if (rank != root) {
            requireWritable(tensor, "broadcast", name);
        }
        Op o = Op.of(OpKind.BROADCAST, name, tensor.dataType(), tensor.shapeShared(), tensor.segment()).root(root);
        return submit(o, x -> tensor);
    }

    // ---- alltoall

    Handle<AlltoallResult> alltoallAsync(String name, Tensor tensor, long[] splits) {
        requireRank(tensor, "alltoall");
        long rows = tensor.shape()[0];
        long[] s = splits;
        if (s == null) {
            if (rows % size != 0) {
                throw new IllegalArgumentException("alltoall without splits needs a first dimension divisible by "
                        + size + " ranks, got " + rows + "; pass explicit splits");
            }
            s = new long[size];
            java.util.Arrays.fill(s, rows / size);
        }
        Tensor[] out = new Tensor[1];
        Op o = Op.of(OpKind.ALLTOALL, name, tensor.dataType(), tensor.shapeShared(), tensor.segment()).splits(s)
                .outputs(shape -> (out[0] = Tensor.allocateLike(tensor, tensor.dataType(), shape)).segment());
        return submit(o, x -> new AlltoallResult(out[0], x.receivedSplits()));
    }

    // ---- reducescatter

    Handle<Tensor> reducescatterAsync(String name, Tensor tensor, ReduceOp op) {
        requireRank(tensor, "reducescatter");
        if (op == ReduceOp.ADASUM) {
            throw new IllegalArgumentException("ReduceOp.ADASUM is an allreduce of whole vectors; reducescatter takes"
                    + " SUM, AVERAGE, MIN, MAX or PRODUCT");
        }
        Tensor[] out = new Tensor[1];
        Op o = Op.of(OpKind.REDUCESCATTER, name, tensor.dataType(), tensor.shapeShared(), tensor.segment())
                .reduce(op, 1.0, 1.0)
                .outputs(shape -> (out[0] = Tensor.allocateLike(tensor, tensor.dataType(), shape)).segment());
        return submit(o, x -> out[0]);
    }

    // ---- synchronisation

    void barrier() {
        Op o = Op.of(OpKind.BARRIER, null, DataType.INT8, new long[0], java.lang.foreign.MemorySegment.NULL);
        submit(o, x -> null).await();
    }

    /** @return the last rank to join, as its rank in this set */
    int join() {
        Op o = Op.of(OpKind.JOIN, null, DataType.INT8, new long[0], java.lang.foreign.MemorySegment.NULL);
        return submit(o, Op::lastJoined).await();
    }

    // ---- plumbing

    <T> Handle<T> submit(Op op, Function<Op, T> result) {
        if (closed.getAsBoolean()) {
            throw new IllegalStateException("this communicator (rank " + jobRank + ") is closed");
        }
        Handle<T> handle = new Handle<>(op.name(), engine.settings().timeout());
        op.processSet(set).listener(new Op.Listener() {
            @Override
            public void completed(Op o) {
                T value;
                try {
                    value = result.apply(o);
                } catch (RuntimeException e) {
                    // Turning the result into the caller's form (e.g. decompressing) failed: the caller must hear
                    // of it now, not wait out its timeout.
                    handle.fail(new KoloException(o.kind().label() + " '" + o.name() + "' ran, but its result could"
                            + " not be delivered on rank " + jobRank + ": " + e, e));
                    return;
                }
                handle.complete(value);
            }

            @Override
            public void failed(Op o, RuntimeException error) {
                handle.fail(error);
            }
        });
        handle.drivenBy(driver);
        handle.explainedBy(waitingFor);
        engine.submit(op);
        handle.named(op.name());
        return handle;
    }

    /**
     * An in-place op writes its result into the tensor. Refused here, on the caller's thread, before anything is
     * submitted: found only when the result is written, it failed this rank's engine and with it the job, naming
     * nothing the user passed.
     */
    private static void requireWritable(Tensor t, String op, String name) {
        if (t.segment().isReadOnly()) {
            throw new IllegalArgumentException(op + (name == null ? "" : " '" + name + "'") + ": the tensor's memory is"
                    + " read-only, and " + op + " writes its result into it; pass writable memory");
        }
    }

    private static void requireRank(Tensor t, String op) {
        if (t.shape().length == 0) {
            throw new IllegalArgumentException(op + " needs a tensor with at least one dimension (rows), got a scalar");
        }
    }
}
