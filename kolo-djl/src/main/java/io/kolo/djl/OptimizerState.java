package io.kolo.djl;

import io.kolo.Communicator;
import io.kolo.DataType;
import io.kolo.Handle;
import io.kolo.Tensor;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * A {@link CommittableOptimizer}'s state on the Java heap, by parameter name: what {@link ElasticTrainerState} commits
 * and broadcasts.
 *
 * @param kind      the optimizer it came from ({@code ""} when it never updated)
 * @param numUpdate the highest update count, the {@code t} of the learning rate and of Adam's bias correction
 * @param counts    each parameter's update count
 * @param slots     each parameter's arrays, as bytes in native order
 */
record OptimizerState(String kind, int numUpdate, Map<String, Integer> counts, Map<String, byte[][]> slots) {
    /** Before any update: fits every optimizer. */
    static final OptimizerState NONE = new OptimizerState("", 0, Map.of(), Map.of());

    boolean isEmpty() {
        return numUpdate == 0 && counts.isEmpty() && slots.isEmpty();
    }

    /**
     * Every rank gets {@code root}'s state: its layout as one small object, then each array as a named broadcast
     * ({@code prefix + name + "." + k}), so a worker that joined with none receives the survivors'.
     */
    static OptimizerState broadcast(Communicator comm, OptimizerState mine, int root, String prefix) {
        Layout layout = comm.broadcastObject(comm.rank() == root ? Layout.of(mine) : null, root);
        Map<String, byte[][]> slots = new TreeMap<>();
        List<Handle<Tensor>> handles = new ArrayList<>();
        layout.lengths().forEach((name, lengths) -> {
            byte[][] copies = comm.rank() == root ? mine.slots().get(name) : new byte[lengths.length][];
            for (int k = 0; k < lengths.length; k++) {
                if (comm.rank() != root) {
                    copies[k] = new byte[lengths[k]];
                }
                handles.add(comm.broadcastAsync(prefix + name + "." + k, Tensor.of(copies[k], DataType.UINT8), root));
            }
            slots.put(name, copies);
        });
        for (Handle<Tensor> h : handles) {
            h.await();
        }
        return new OptimizerState(layout.kind(), layout.numUpdate(), layout.counts(), slots);
    }

    /** What a receiver needs to allocate the arrays. */
    private record Layout(String kind, int numUpdate, TreeMap<String, Integer> counts, TreeMap<String, int[]> lengths)
            implements Serializable {
        static Layout of(OptimizerState s) {
            TreeMap<String, int[]> lengths = new TreeMap<>();
            s.slots().forEach((name, copies) -> {
                int[] l = new int[copies.length];
                for (int k = 0; k < l.length; k++) {
                    l[k] = copies[k].length;
                }
                lengths.put(name, l);
            });
            return new Layout(s.kind(), s.numUpdate(), new TreeMap<>(s.counts()), lengths);
        }
    }
}
