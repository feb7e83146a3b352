package io.kolo.elastic;

import io.kolo.Kolo;
import io.kolo.ReduceOp;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * What an elastic training loop must not lose when a worker dies or hosts come and go: the model, the optimizer, the
 * position in the data. {@link Elastic#run} keeps it consistent across the launcher's successive jobs:
 * {@link #commit()} saves a copy in memory, {@link #restore()} goes back to it after a failure, and {@link #sync()}
 * gives every rank rank 0's copy when a job starts.
 *
 * <pre>{@code
 * ObjectState state = new ObjectState(Map.of("epoch", 0, "weights", new float[n]));
 * state.registerResetCallback(() -> sampler.setSize(Kolo.size()));   // after every re-join
 * Elastic.run(state, s -> {
 *     for (int epoch = s.<Integer>get("epoch"); epoch < 10; epoch++) {
 *         train(s.get("weights"));
 *         s.set("epoch", epoch + 1);
 *         s.commit();                   // a failure from here on resumes at the next epoch
 *     }
 *     return null;
 * });
 * }</pre>
 *
 * Subclasses say how to save, restore and sync their values; {@link ObjectState} does it for named
 * {@link java.io.Serializable} values.
 */
public abstract class ElasticState {
    private final List<Runnable> resetCallbacks = new CopyOnWriteArrayList<>();

    /** For subclasses, which hold the values. */
    protected ElasticState() {
    }

    /** Saves a copy of the state in memory: what {@link #restore()} goes back to. Local, no communication. */
    public abstract void save();

    /** Back to the last {@link #save()} (or {@link #commit()}). Local, no communication. */
    public abstract void restore();

    /** Every rank takes rank 0's state (a broadcast), then saves it. All ranks must call it together. */
    public abstract void sync();

    /**
     * Saves the state, then checks whether the launcher has started a new job (hosts added or removed); if so, every
     * rank leaves this one at this same commit and {@link Elastic#run} re-joins without losing the work just committed.
     * All ranks must call it together: the check is one small allreduce, so that no rank goes on alone.
     */
    public void commit() {
        save();
        checkHostUpdates();
    }

    /**
     * Raises the re-join described at {@link #commit()} when the launcher has a new job, on every rank together; does
     * nothing outside an elastic job.
     */
    public void checkHostUpdates() {
        ElasticWorker worker = ElasticWorker.current().orElse(null);
        if (worker == null || !Kolo.isInitialized()) {
            return;
        }
        // Rank 0 may have seen the new job and rank 1 not yet: all go by the newest any rank saw.
        long[] latest = {worker.latestPublished()};
        Kolo.allreduce(latest, ReduceOp.MAX);
        if (latest[0] > worker.generation()) {
            throw new HostsUpdatedInterrupt((int) latest[0]);
        }
    }

    /** {@code callback} runs on this rank after every re-join, once {@code Kolo.rank()/size()} are the new job's. */
    public void registerResetCallback(Runnable callback) {
        resetCallbacks.add(callback);
    }

    /** Called by {@link Elastic#run} after a re-join. */
    void onReset() {
        for (Runnable r : resetCallbacks) {
            r.run();
        }
    }
}
