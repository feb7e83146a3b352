package io.kolo.djl;

import ai.djl.ndarray.NDArray;
import ai.djl.nn.Parameter;
import ai.djl.util.Pair;
import io.kolo.Communicator;
import io.kolo.Compression;
import io.kolo.DataType;
import io.kolo.Handle;
import io.kolo.ReduceOp;
import io.kolo.Tensor;

import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Allreduces every trainable parameter's gradient across ranks, matching tensors by parameter name.
 *
 * <p>DJL's parameter ids are random per process and its optimizer walks parameters in hash-map order, so
 * neither can pair tensors across ranks; the names from {@code Block.getParameters()} are the same in every
 * process that builds the same model. Each gradient becomes a named Kolo allreduce, all submitted before any
 * is awaited, so Kolo's engine fuses them into as few ring passes as its fusion threshold allows.
 *
 * <p>Zero copy: PyTorch gives a direct {@code ByteBuffer} over a contiguous tensor's own memory
 * ({@code toByteBuffer(true)}); Kolo reduces straight in that memory, so the averaged gradient is in place for
 * the optimizer without any copy on the Java side. A gradient that turns out not to be viewable that way
 * (non-contiguous) is copied out and written back with {@code set}.
 */
final class GradientAverager {
    private static final String PREFIX = "djl.grad.";

    private final Communicator comm;
    private final DistributedOptions options;
    // Per parameter name: whether toByteBuffer(true) is a view (checked once).
    private final Map<String, Boolean> isView = new HashMap<>();

    GradientAverager(Communicator comm, DistributedOptions options) {
        this.comm = comm;
        this.options = options;
    }

    /**
     * Replaces each trainable parameter's gradient with its reduction over all ranks.
     *
     * @param parameters the model's parameters, by name, in the same order on every rank
     * @param passes     backward passes accumulated in the gradients (they are divided by it)
     */
    void allreduce(List<Pair<String, Parameter>> parameters, int passes) {
        ReduceOp op = options.op();
        double prescale = 1.0;
        double postscale = 1.0 / passes;
        if (op == ReduceOp.AVERAGE && options.gradientPredivideFactor() != 1.0) {
            // Horovod's predivide: sum of g/f, then times f/size, equals the average but keeps sums small.
            op = ReduceOp.SUM;
            prescale = 1.0 / options.gradientPredivideFactor();
            postscale = options.gradientPredivideFactor() / comm.size() / passes;
        }
        List<Pending> pending = new ArrayList<>(parameters.size());
        try {
            for (Pair<String, Parameter> p : parameters) {
                Parameter parameter = p.getValue();
                if (!parameter.requiresGradient()) {
                    continue;
                }
                pending.add(submit(p.getKey(), parameter.getArray(), op, prescale, postscale));
            }
            for (Pending x : pending) {
                x.handle.await();
                x.finish();
            }
        } finally {
            for (Pending x : pending) {
                x.grad.close();
            }
        }
    }

    private Pending submit(String name, NDArray array, ReduceOp op, double prescale, double postscale) {
        NDArray grad = array.getGradient();
        ByteBuffer memory = grad.toByteBuffer(true);
        boolean view = isView.computeIfAbsent(name, n -> sameMemory(memory, grad.toByteBuffer(true)));
        Tensor tensor = Tensor.of(memory, koloType(name, grad.getDataType()), grad.size());
        Compression compression = options.compression();
        // NONE names no compression, so KOLO_COMPRESSION still applies, as it does to any allreduce.
        Handle<Tensor> h = compression == Compression.NONE
                ? comm.allreduceAsync(PREFIX + name, tensor, op, prescale, postscale)
                : comm.allreduceAsync(PREFIX + name, tensor, op, prescale, postscale, compression);
        return new Pending(grad, memory, view, h);
    }

    private static boolean sameMemory(ByteBuffer a, ByteBuffer b) {
        return MemorySegment.ofBuffer(a).address() == MemorySegment.ofBuffer(b).address();
    }

    static DataType koloType(String name, ai.djl.ndarray.types.DataType type) {
        return switch (type) {
            case FLOAT32 -> DataType.FLOAT32;
            case FLOAT64 -> DataType.FLOAT64;
            case FLOAT16 -> DataType.FLOAT16;
            case BFLOAT16 -> DataType.BFLOAT16;
            default -> throw new IllegalArgumentException("parameter " + name + " has type " + type
                    + "; Kolo averages only floating-point gradients (float16/bfloat16/float32/float64)");
        };
    }

    private record Pending(NDArray grad, ByteBuffer memory, boolean view, Handle<Tensor> handle) {
        void finish() {
            if (!view) {
                grad.set(memory);
            }
        }
    }
}
