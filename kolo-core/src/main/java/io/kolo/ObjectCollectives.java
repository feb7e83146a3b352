package io.kolo;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.List;

/**
 * Collectives on Java objects, for small things every rank needs (a configuration, a vocabulary, a count of samples):
 * each object travels Java-serialised, its length first. Not for tensors: they have their own collectives.
 *
 * <pre>{@code
 * Config c = comm.broadcastObject(rank == 0 ? Config.load() : null, 0);   // rank 0's config on every rank
 * List<Integer> counts = comm.allgatherObject(mySamples);                // one count per rank, in rank order
 * }</pre>
 */
public interface ObjectCollectives extends ArrayCollectives {
    int rank();

    int size();

    /** {@code root}'s object, serialised and sent to every rank. */
    default <T extends Serializable> T broadcastObject(T object, int root) {
        long[] length = {0};
        byte[] bytes = null;
        if (rank() == root) {
            bytes = ObjectCodec.serialize(object);
            length[0] = bytes.length;
        }
        broadcast(length, root);
        if (rank() != root) {
            bytes = new byte[Math.toIntExact(length[0])];
        }
        broadcast(Tensor.of(bytes, DataType.UINT8), root);
        return ObjectCodec.deserialize(bytes);
    }

    /** Every rank's object, in rank order. */
    default <T extends Serializable> List<T> allgatherObject(T object) {
        byte[] mine = ObjectCodec.serialize(object);
        long[] lengths = allgather(new long[]{mine.length});
        byte[] all = allgather(Tensor.of(mine, DataType.UINT8)).bytes();
        List<T> out = new ArrayList<>(size());
        int off = 0;
        for (long len : lengths) {
            out.add(ObjectCodec.deserialize(java.util.Arrays.copyOfRange(all, off, off + (int) len)));
            off += (int) len;
        }
        return out;
    }
}
