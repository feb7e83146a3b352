package io.kolo.elastic;

import io.kolo.Kolo;
import io.kolo.KoloException;
import io.kolo.KoloTimeoutException;
import io.kolo.RankFailedException;
import io.kolo.bootstrap.ElasticScope;
import io.kolo.bootstrap.GenerationReplacedException;
import io.kolo.transport.PeerFailedException;

/**
 * Elastic training (Horovod's {@code hvd.elastic.run}): the training function survives workers that die and hosts
 * that come and go, under {@code kolo run --min-np A --max-np B [--host-discovery-script S]}.
 *
 * <pre>{@code
 * public static void main(String[] args) {
 *     ObjectState state = new ObjectState(Map.of("step", 0L, "weights", new float[n]));
 *     long done = Elastic.run(state, s -> {
 *         for (long step = s.<Long>get("step"); step < 1000; step++) {
 *             float[] w = s.get("weights");
 *             float[] g = gradient(w, shard(step, Kolo.rank(), Kolo.size()));
 *             Kolo.allreduce(g, ReduceOp.AVERAGE);   // a dead peer fails this on every rank
 *             apply(w, g);
 *             s.set("step", step + 1);
 *             s.commit();                             // the point a failure goes back to
 *         }
 *         return s.<Long>get("step");
 *     });
 *     Kolo.shutdown();
 * }
 * }</pre>
 *
 * {@code run} joins the job ({@link Kolo#init()}) if needed, then loops {@code state.sync(); body(state)}. When a
 * collective fails because a rank died ({@link RankFailedException}), it restores the last commit, leaves the job,
 * waits for the launcher's next one, re-joins it (new size, maybe a new rank), runs the state's reset callbacks and
 * calls {@code body} again. When hosts were added or removed, every rank leaves at the same {@link
 * ElasticState#commit()} and re-joins without restoring. Outside an elastic launcher a failure is thrown as usual.
 *
 * <p>In an elastic job the {@link Kolo} facade's collectives run only while {@code run} runs (its body, the state's
 * {@code sync()} and {@code commit()}): one called before or after it fails at once with an
 * {@link IllegalStateException} saying so, since a worker started after a reset never reaches it.
 */
public final class Elastic {
    /** The training function: what it returns, {@link #run} returns. */
    @FunctionalInterface
    public interface Body<S extends ElasticState, T> {
/** Trains from {@code state} (synced from the other workers); what it returns, {@link Elastic#run} returns. */
        T run(S state) throws Exception;
    }

    private Elastic() {
    }

    /**
     * Runs {@code body} until it returns, across resets (see the class comment).
     *
     * @throws WorkerRemovedException when the launcher's new job has no place for this worker (the program should end)
     * @throws KoloTimeoutException   when the launcher publishes no new job within {@code KOLO_ELASTIC_TIMEOUT_SECONDS}
     * @throws KoloException          wrapping what {@code body} threw, when that was not a lost rank
     */
    public static <S extends ElasticState, T> T run(S state, Body<S, T> body) {
        try {
            Kolo.init();
        } catch (RuntimeException e) {
            // Started into a job that lost another worker while it formed: wait for the launcher's next job, as the
            // workers that survived into it do (a failure that is not of that kind ends this worker as before).
            ElasticWorker worker = ElasticWorker.current().orElseThrow(() -> e);
            String why = startFailure(worker, e);
            if (why == null) {
                throw e;
            }
            note(worker, why);
            rejoin(worker);
        }
        ElasticScope.enter();
        try {
            return runInScope(state, body);
        } finally {
            ElasticScope.exit();
        }
    }

    private static <S extends ElasticState, T> T runInScope(S state, Body<S, T> body) {
        ElasticWorker worker = ElasticWorker.current().orElse(null);
        while (true) {
            try {
                state.sync();
                return body.run(state);
            } catch (HostsUpdatedInterrupt e) {
                note(worker, "hosts changed; re-joining at the commit just made");
            } catch (Exception e) {
                RankFailedException lost = lostRank(e);
                if (worker == null || lost == null) {
                    throw e instanceof RuntimeException r ? r : new KoloException("the elastic body failed: " + e, e);
                }
                note(worker, lost.getMessage() + "; restoring the last commit");
                state.restore();
            }
            rejoin(worker);
            state.onReset();
        }
    }

    /** Leaves the job, then joins the launcher's next one; a next job that fails while starting is skipped. */
    private static void rejoin(ElasticWorker worker) {
        while (true) {
            Kolo.shutdown();
            java.util.Map<String, String> env = worker.awaitNextJob();
            try {
                Kolo.init(env);
                note(worker, "joined job " + worker.generation() + " as rank " + Kolo.rank() + " of " + Kolo.size());
                return;
            } catch (RuntimeException e) {
                String why = startFailure(worker, e);
                if (why == null) {
                    throw e;
                }
                note(worker, why);
            }
        }
    }

    /**
     * What this worker says when joining its job failed because the job cannot form (the launcher replaced it, a peer
     * died or never came, the start timed out), after which it waits for the launcher's next job; null for any other
     * failure (a bad setting), which ends it.
     */
    private static String startFailure(ElasticWorker worker, RuntimeException e) {
        if (e instanceof GenerationReplacedException) {
            return e.getMessage() + "; joining that";
        }
        if (e instanceof RankFailedException || e instanceof KoloTimeoutException || e instanceof PeerFailedException) {
            return "job " + worker.generation() + " failed while starting (" + e.getMessage() + "); waiting for the"
                    + " next";
        }
        return null;
    }

    /** The lost rank behind {@code e}, if a lost rank is why it failed (possibly wrapped, e.g. by DJL). */
    static RankFailedException lostRank(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof RankFailedException r) {
                return r;
            }
        }
        return null;
    }

    private static void note(ElasticWorker worker, String what) {
        if (worker != null) {
            // The user's account of every reset, one line each, beside the launcher's.
            System.err.println("kolo: worker " + worker.id() + ": " + what);
            System.err.flush();
        }
    }
}
