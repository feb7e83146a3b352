package io.kolo;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.List;

/**
 * {@link Collectives#broadcastObject} and {@link Collectives#allgatherObject} over a set's tensor collectives: each
 * object travels Java-serialised, its length first.
 */
final class ObjectCollectives {
    private ObjectCollectives() {
    }

    /** @param root the root's rank in the set */
    static <T extends Serializable> T broadcast(SetCollectives set, T object, int root) {
        long[] length = {0};
        byte[] bytes = null;
        IllegalArgumentException unsent = null;
        if (set.rank() == root) {
            try {
                bytes = ObjectCodec.serialize(object);
                length[0] = bytes.length;
            } catch (IllegalArgumentException e) {
                // The others wait for this broadcast: they get the reason (a negative length, then its text), not a hang.
                unsent = e;
                bytes = e.getMessage().getBytes(java.nio.charset.StandardCharsets.UTF_8);
                length[0] = -1 - bytes.length;
            }
        }
        set.broadcast(Tensor.of(length), root);
        if (set.rank() != root) {
            bytes = new byte[Math.toIntExact(length[0] < 0 ? -1 - length[0] : length[0])];
        }
        set.broadcast(Tensor.of(bytes, DataType.UINT8), root);
        if (unsent != null) {
            throw unsent;
        }
        if (length[0] < 0) {
            throw new KoloException("broadcastObject: the root could not send its object: "
                    + new String(bytes, java.nio.charset.StandardCharsets.UTF_8));
        }
        return ObjectCodec.deserialize(bytes);
    }

    static <T extends Serializable> List<T> allgather(SetCollectives set, T object) {
        byte[] mine;
        IllegalArgumentException unsent = null;
        try {
            mine = ObjectCodec.serialize(object);
        } catch (IllegalArgumentException e) {
            // Still take part, with a length of -1, so that every rank fails here instead of the others hanging.
            unsent = e;
            mine = new byte[0];
        }
        long[] lengths = set.allgather(Tensor.of(new long[]{unsent == null ? mine.length : -1})).longs();
        List<Integer> failed = new ArrayList<>();
        for (int r = 0; r < lengths.length; r++) {
            if (lengths[r] < 0) {
                failed.add(r);
            }
        }
        if (unsent != null) {
            throw unsent;
        }
        if (!failed.isEmpty()) {
            throw new KoloException("allgatherObject: rank" + (failed.size() == 1 ? " " : "s ") + failed
                    + " could not serialise " + (failed.size() == 1 ? "its object" : "their objects")
                    + " (the error on " + (failed.size() == 1 ? "that rank" : "those ranks") + " says why)");
        }
        byte[] all = set.allgather(Tensor.of(mine, DataType.UINT8)).bytes();
        List<T> out = new ArrayList<>(set.size());
        int off = 0;
        for (long len : lengths) {
            out.add(ObjectCodec.deserialize(java.util.Arrays.copyOfRange(all, off, off + (int) len)));
            off += (int) len;
        }
        return out;
    }
}
