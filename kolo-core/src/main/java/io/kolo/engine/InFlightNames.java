package io.kolo.engine;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The names that have an op in flight on this rank, so that a second op of the same name is refused at submission.
 * A name's entry (a {@link Slot}) stays once its op is done: a training loop repeats its names every step, and
 * claiming a kept slot is a lookup and a compare-and-set, where adding and removing a set element allocates and
 * locks every time (measured: ~12 % of a 1 KiB allreduce). Generated names never repeat, and past {@code keep} kept
 * names (a loop that invents a name per step) slots are dropped as their ops finish, so the map stays bounded.
 */
final class InFlightNames {
    /** One name's flag; an op holds its slot from submission until it completes or fails. */
    static final class Slot {
        private static final VarHandle BUSY;

        static {
            try {
                BUSY = MethodHandles.lookup().findVarHandle(Slot.class, "busy", boolean.class);
            } catch (ReflectiveOperationException e) {
                throw new ExceptionInInitializerError(e);
            }
        }

        private final String name;
        @SuppressWarnings("unused") // through BUSY
        private volatile boolean busy;
        /** Set before the slot leaves the map, so a claim that won it afterwards knows to let it go. */
        private volatile boolean dropped;

        private Slot(String name) {
            this.name = name;
        }

        private boolean claim() {
            return BUSY.compareAndSet(this, false, true);
        }

        private void free() {
            // A release store: it orders the drop above before it, and a claim's compare-and-set sees it soon after.
            BUSY.setRelease(this, false);
        }
    }

    private final ConcurrentHashMap<String, Slot> slots = new ConcurrentHashMap<>();
    private final int keep;

    /** @param keep how many names keep their slot between ops */
    InFlightNames(int keep) {
        this.keep = keep;
    }

    /** Marks {@code name} in flight and returns its slot, or null when an op of that name already is. */
    Slot claim(String name) {
        while (true) {
            Slot s = slots.get(name);
            if (s == null) {
                s = slots.computeIfAbsent(name, Slot::new);
            }
            if (!s.claim()) {
                return null;
            }
            if (!s.dropped) {
                return s;
            }
            // The slot was dropped between our lookup and our claim: whoever claims the name next would not see
            // ours. Let it go and claim the slot the map holds now.
            s.free();
        }
    }

    /** The op holding {@code slot} is done; {@code repeat}: keep the slot for the name's next op. */
    void release(Slot slot, boolean repeat) {
        if (!repeat || slots.size() > keep) {
            // Dropped before it is freed: a claim that still finds it busy refuses, one that wins it after this sees
            // the flag and retries with the map's current slot.
            slot.dropped = true;
            slots.remove(slot.name, slot);
        }
        slot.free();
    }

    /** Names with a slot, in flight or kept (tests). */
    int slots() {
        return slots.size();
    }
}
