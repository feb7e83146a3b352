package io.kolo.djl;

import ai.djl.ndarray.NDArray;
import ai.djl.nn.Block;
import ai.djl.nn.Parameter;
import ai.djl.util.Pair;
import io.kolo.Communicator;
import io.kolo.DataType;
import io.kolo.Handle;
import io.kolo.Tensor;

import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;

/**
 * A block's parameters by name, as bytes: copied out, written back, broadcast in place. What {@link
 * DistributedTrainer} and {@link ElasticTrainerState} both need to move a model between ranks or back in time.
 */
final class ModelParameters {
    private ModelParameters() {
    }

    static List<Pair<String, Parameter>> of(Block block) {
        List<Pair<String, Parameter>> out = new ArrayList<>();
        for (Pair<String, Parameter> p : block.getParameters()) {
            out.add(p);
        }
        return out;
    }

    /** A copy of every parameter's bytes, in {@link #of} order, on the Java heap (it must outlive device memory). */
    static List<byte[]> copy(Block block) {
        List<byte[]> out = new ArrayList<>();
        for (Pair<String, Parameter> p : of(block)) {
            ByteBuffer b = p.getValue().getArray().toByteBuffer(true);
            byte[] bytes = new byte[b.remaining()];
            b.duplicate().get(bytes);
            out.add(bytes);
        }
        return out;
    }

    /** Writes {@code copies} (from {@link #copy}) back into the parameters, in place. */
    static void write(Block block, List<byte[]> copies) {
        List<Pair<String, Parameter>> params = of(block);
        if (params.size() != copies.size()) {
            throw new IllegalStateException("the model has " + params.size() + " parameters but the copy has "
                    + copies.size() + ": was the block changed after the state was made?");
        }
        for (int i = 0; i < params.size(); i++) {
            NDArray array = params.get(i).getValue().getArray();
            byte[] bytes = copies.get(i);
            // NDArray.set wants the native byte order, as toByteBuffer gave it.
            array.set(ByteBuffer.allocateDirect(bytes.length).order(ByteOrder.nativeOrder()).put(bytes).flip());
        }
    }

    /**
     * Zeroes every accumulated gradient: a failure between backward and the optimizer's update leaves them filled,
     * and the next step after a restore must not add them in (DJL's PyTorch engine accumulates).
     */
    static void zeroGradients(Block block) {
        for (Pair<String, Parameter> p : of(block)) {
            NDArray array = p.getValue().getArray();
            if (array.hasGradient()) {
                NDArray grad = array.getGradient();
                grad.subi(grad);
            }
        }
    }

    /** Every rank takes {@code root}'s parameter values, matched by name; ops are named {@code prefix + name}. */
    static void broadcast(Communicator comm, Block block, int root, String prefix) {
        ModelSignature.checkSameOnEveryRank(comm, block);
        List<Handle<Tensor>> handles = new ArrayList<>();
        List<NDArray> writeBack = new ArrayList<>();
        List<ByteBuffer> buffers = new ArrayList<>();
        for (Pair<String, Parameter> p : of(block)) {
            NDArray array = p.getValue().getArray();
            ByteBuffer memory = array.toByteBuffer(true);
            DataType type = GradientAverager.koloType(p.getKey(), array.getDataType());
            handles.add(comm.broadcastAsync(prefix + p.getKey(), Tensor.of(memory, type, array.size()), root));
            writeBack.add(array);
            buffers.add(memory);
        }
        for (int i = 0; i < handles.size(); i++) {
            handles.get(i).await();
            // Parameters are contiguous, so the buffer is their memory; set() also covers the rare copy.
            ByteBuffer again = writeBack.get(i).toByteBuffer(true);
            if (MemorySegment.ofBuffer(again).address() != MemorySegment.ofBuffer(buffers.get(i)).address()) {
                writeBack.get(i).set(buffers.get(i));
            }
        }
    }
}
