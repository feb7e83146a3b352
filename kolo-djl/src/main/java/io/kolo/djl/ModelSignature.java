package io.kolo.djl;

import ai.djl.ndarray.NDArray;
import ai.djl.nn.Block;
import ai.djl.nn.Parameter;
import ai.djl.util.Pair;
import io.kolo.Communicator;

import java.util.ArrayList;
import java.util.List;

/**
 * The names, types and shapes of a block's parameters, compared across ranks before their values move.
 *
 * <p>Parameters travel as ops named after them, so a rank whose model has a parameter the others lack would wait
 * for partners that never come (until the stall check, which names an op, not the model), and one of another width
 * would fail naming byte counts. One 8-byte allgather finds either, and every rank then fails with the same message.
 */
final class ModelSignature {
    private ModelSignature() {
    }

    static void checkSameOnEveryRank(Communicator comm, Block block) {
        if (comm.size() == 1) {
            return;
        }
        ArrayList<String> mine = describe(block);
        long[] hashes = comm.allgather(new long[]{hash(mine)});
        for (long h : hashes) {
            if (h != hashes[0]) {
                throw new IllegalStateException(difference(comm.allgatherObject(mine)));
            }
        }
    }

    private static ArrayList<String> describe(Block block) {
        ArrayList<String> out = new ArrayList<>();
        for (Pair<String, Parameter> p : block.getParameters()) {
            NDArray array = p.getValue().getArray();
            out.add(p.getKey() + " " + array.getDataType().name() + " " + array.getShape());
        }
        return out;
    }

    private static long hash(List<String> parameters) {
        long h = 0xcbf29ce484222325L;
        for (String p : parameters) {
            for (int i = 0; i < p.length(); i++) {
                h = (h ^ p.charAt(i)) * 0x100000001b3L;
            }
            h = (h ^ '\n') * 0x100000001b3L;
        }
        return h;
    }

    /** The first rank that differs from rank 0, and where. */
    static String difference(List<ArrayList<String>> ranks) {
        List<String> first = ranks.getFirst();
        for (int r = 1; r < ranks.size(); r++) {
            List<String> other = ranks.get(r);
            if (other.equals(first)) {
                continue;
            }
            String counts = first.size() == other.size() ? ""
                    : "rank 0 has " + first.size() + " parameters, rank " + r + " has " + other.size() + "; ";
            int i = 0;
            while (i < first.size() && i < other.size() && first.get(i).equals(other.get(i))) {
                i++;
            }
            return "the ranks' models differ: " + counts + "the first difference is parameter " + (i + 1) + ": rank 0 has "
                    + (i < first.size() ? first.get(i) : "none") + ", rank " + r + " has "
                    + (i < other.size() ? other.get(i) : "none") + "; build the same model on every rank";
        }
        throw new IllegalStateException("the ranks' parameter hashes differ but their descriptions agree");
    }
}
