package io.kolo.engine;

import java.util.ArrayList;
import java.util.List;

/**
 * The engine thread's ops by name, from the cycle that takes them up until they complete. An open-addressing
 * table instead of a {@link java.util.HashMap} because a HashMap allocates an entry per insertion, and this is
 * on the per-op path that must not allocate in steady state; this table allocates only when it grows.
 * Not thread-safe: used by the engine thread only.
 */
final class PendingOps {
    private String[] keys = new String[64];
    private Op[] values = new Op[64];
    private int size;

    boolean isEmpty() {
        return size == 0;
    }

    Op get(String name) {
        int mask = keys.length - 1;
        for (int i = slot(name, mask); keys[i] != null; i = (i + 1) & mask) {
            if (keys[i].equals(name)) {
                return values[i];
            }
        }
        return null;
    }

    boolean containsKey(String name) {
        return get(name) != null;
    }

    /** Adds or replaces the op under {@code name}. */
    void put(String name, Op op) {
        if (2 * (size + 1) > keys.length) {
            grow();
        }
        int mask = keys.length - 1;
        int i = slot(name, mask);
        while (keys[i] != null) {
            if (keys[i].equals(name)) {
                values[i] = op;
                return;
            }
            i = (i + 1) & mask;
        }
        keys[i] = name;
        values[i] = op;
        size++;
    }

    /** Removes and returns the op under {@code name}, or null. */
    Op remove(String name) {
        int mask = keys.length - 1;
        int i = slot(name, mask);
        while (keys[i] != null && !keys[i].equals(name)) {
            i = (i + 1) & mask;
        }
        if (keys[i] == null) {
            return null;
        }
        Op removed = values[i];
        keys[i] = null;
        values[i] = null;
        size--;
        // Backward-shift deletion: move later members of the probe run into the hole so lookups never stop early.
        int hole = i;
        for (int j = (i + 1) & mask; keys[j] != null; j = (j + 1) & mask) {
            int home = slot(keys[j], mask);
            boolean movable = hole <= j ? home <= hole || home > j : home <= hole && home > j;
            if (movable) {
                keys[hole] = keys[j];
                values[hole] = values[j];
                keys[j] = null;
                values[j] = null;
                hole = j;
            }
        }
        return removed;
    }

    /** A snapshot of the ops, in no particular order. */
    List<Op> values() {
        List<Op> all = new ArrayList<>(size);
        for (Op op : values) {
            if (op != null) {
                all.add(op);
            }
        }
        return all;
    }

    void clear() {
        java.util.Arrays.fill(keys, null);
        java.util.Arrays.fill(values, null);
        size = 0;
    }

    private static int slot(String name, int mask) {
        int h = name.hashCode();
        return (h ^ (h >>> 16)) & mask;
    }

    private void grow() {
        String[] oldKeys = keys;
        Op[] oldValues = values;
        keys = new String[oldKeys.length * 2];
        values = new Op[oldValues.length * 2];
        size = 0;
        for (int i = 0; i < oldKeys.length; i++) {
            if (oldKeys[i] != null) {
                put(oldKeys[i], oldValues[i]);
            }
        }
    }
}
