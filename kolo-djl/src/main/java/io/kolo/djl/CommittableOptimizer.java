package io.kolo.djl;

import ai.djl.ndarray.NDArray;
import ai.djl.training.optimizer.Optimizer;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A DJL optimizer whose state (the per-parameter arrays of its update rule and the update counts its learning rate
 * follows) can be copied out and written back, so that {@link ElasticTrainerState} commits it with the parameters.
 * DJL's own optimizers keep the same state in private fields; the subclasses here apply DJL's update kernels to state
 * held here.
 *
 * <p>The state is keyed by DJL's parameter id, as {@code update} receives it; ids are random per process, so the
 * copies are keyed by parameter name, which the caller maps.
 */
abstract class CommittableOptimizer extends Optimizer {
    private final int beginNumUpdate;
    private final Map<String, Integer> counts = new ConcurrentHashMap<>();
    private final Map<String, NDArray[]> arrays = new ConcurrentHashMap<>();
    // Restored copies not yet made arrays: that needs the weight's device, known at its first update.
    private final Map<String, byte[][]> restored = new ConcurrentHashMap<>();
    private volatile int numUpdate;
    private volatile boolean released;

    CommittableOptimizer(OptimizerBuilder<?> builder, int beginNumUpdate) {
        super(builder);
        this.beginNumUpdate = beginNumUpdate;
    }

    /** The optimizer's name in messages, e.g. {@code Adam}; a state is restored only into the same kind. */
    abstract String kind();

    /** Arrays of the weight's shape that the update rule keeps per parameter. */
    abstract int slots();

    /**
     * DJL's {@code Optimizer.updateCount}: this parameter's update count goes up by one (the first is {@code
     * beginNumUpdate + 1}) and the result is the highest count of any parameter.
     */
    final int nextUpdate(String parameterId) {
        if (released) {
            throw new IllegalStateException("this " + kind() + " optimizer belongs to a trainer that "
                    + "ElasticTrainerState.newTrainer() has replaced: make one trainer per job and train with it");
        }
        int count = counts.merge(parameterId, beginNumUpdate + 1, (old, one) -> old + 1);
        numUpdate = Math.max(numUpdate, count);
        return numUpdate;
    }

    /** The update rule's arrays for this parameter: zeros at its first update, or the restored copies. */
    final NDArray[] state(String parameterId, NDArray weight) {
        NDArray[] state = arrays.get(parameterId);
        if (state == null) {
            state = new NDArray[slots()];
            byte[][] copies = restored.remove(parameterId);
            for (int k = 0; k < state.length; k++) {
                state[k] = weight.zerosLike();
                if (copies != null) {
                    long bytes = weight.size() * weight.getDataType().getNumOfBytes();
                    if (copies[k].length != bytes) {
                        throw new IllegalStateException("the restored " + kind() + " state of a parameter has "
                                + copies[k].length + " bytes but the parameter has " + bytes
                                + ": was the block changed after the state was made?");
                    }
                    state[k].set(ByteBuffer.allocateDirect(copies[k].length).order(ByteOrder.nativeOrder())
                            .put(copies[k]).flip());
                }
            }
            arrays.put(parameterId, state);
        }
        return state;
    }

    /** A copy of the state on the Java heap, keyed by parameter name ({@code names}: id to name). */
    final OptimizerState copy(Map<String, String> names) {
        Map<String, Integer> byName = new TreeMap<>();
        counts.forEach((id, count) -> byName.put(name(names, id), count));
        Map<String, byte[][]> slots = new TreeMap<>();
        restored.forEach((id, copies) -> slots.put(name(names, id), copies));
        arrays.forEach((id, state) -> {
            byte[][] copies = new byte[state.length][];
            for (int k = 0; k < state.length; k++) {
                ByteBuffer b = state[k].toByteBuffer(true);
                copies[k] = new byte[b.remaining()];
                b.duplicate().get(copies[k]);
            }
            slots.put(name(names, id), copies);
        });
        return new OptimizerState(kind(), numUpdate, byName, slots);
    }

    /** Replaces the whole state with {@code state}, keyed by name ({@code ids}: name to id). */
    final void load(OptimizerState state, Map<String, String> ids) {
        if (!state.isEmpty() && !state.kind().equals(kind())) {
            throw new IllegalStateException("the committed optimizer state is " + state.kind() + "'s but the training "
                    + "config now makes " + kind() + ": make the same optimizer for every job");
        }
        Map<String, Integer> newCounts = new TreeMap<>();
        state.counts().forEach((name, count) -> newCounts.put(id(ids, name), count));
        Map<String, byte[][]> newRestored = new TreeMap<>();
        state.slots().forEach((name, copies) -> {
            if (copies.length != slots()) {
                throw new IllegalStateException("the committed " + state.kind() + " state has " + copies.length
                        + " arrays per parameter but this " + kind() + " keeps " + slots()
                        + ": make the same optimizer for every job");
            }
            newRestored.put(id(ids, name), copies);
        });
        closeArrays();
        counts.clear();
        counts.putAll(newCounts);
        restored.clear();
        restored.putAll(newRestored);
        numUpdate = state.numUpdate();
    }

    /** Frees the arrays; a later update fails instead of starting again from zeros. */
    final void release() {
        released = true;
        closeArrays();
        restored.clear();
    }

    private void closeArrays() {
        for (NDArray[] state : arrays.values()) {
            for (NDArray a : state) {
                a.close();
            }
        }
        arrays.clear();
    }

    private static String name(Map<String, String> names, String id) {
        String name = names.get(id);
        if (name == null) {
            throw new IllegalStateException("the optimizer has state for a parameter the model does not have: "
                    + "train the model the ElasticTrainerState was made with");
        }
        return name;
    }

    private static String id(Map<String, String> ids, String name) {
        String id = ids.get(name);
        if (id == null) {
            throw new IllegalStateException("the committed optimizer state has parameter " + name
                    + ", which the model does not: was the block changed after the state was made?");
        }
        return id;
    }
}
