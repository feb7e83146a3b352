package io.kolo.bootstrap;

import java.util.Map;

/**
 * Where the {@code Kolo} facade's collectives may run in an elastic job (one started by an elastic launcher, which sets
 * {@code KOLO_ELASTIC_WORKER}): only while {@code Elastic.run} runs in the process (its body, and the state's sync
 * and commit it calls). A worker that the launcher starts after a reset begins inside {@code Elastic.run}, so a
 * collective before or after it meets no partner there: the ranks would wait in different calls, or mix up their
 * data. Refusing it at once names the mistake instead.
 *
 * <p>The rule is per process, not per thread: a collective on another thread while one thread is inside
 * {@code Elastic.run} is allowed (data loaders and DJL's own threads work for the body).
 */
public final class ElasticScope {
    /** The one line a refused collective throws with. */
    public static final String REFUSED = "a Kolo collective was called outside Elastic.run in an elastic job (a worker"
            + " started after a reset never reaches it, so the ranks would wait in different calls): call collectives"
            + " inside Elastic.run(state, body) in an elastic job";

    /**
     * What an elastic worker does when its first join fails because its job cannot form: wait for the launcher's next
     * job and join that. {@code io.kolo.elastic} sets it when loaded; it is reached through here because the facade,
     * whose {@code init()} a program may call before {@code Elastic.run}, must not depend on the package above it.
     */
    private static volatile StartRecovery startRecovery;
    private static boolean elasticJob;
    private static int depth;
    // Read by every collective of the facade, so it is a single field; written only on join, leave and Elastic.run.
    private static volatile boolean refusing;

    private ElasticScope() {
    }

    /** How a worker whose first join failed joins the launcher's next job instead (see {@link #recoverStart}). */
    @FunctionalInterface
    public interface StartRecovery {
        /**
         * Joins the launcher's next job when {@code failure} says this one cannot form; rethrows {@code failure}
         * otherwise (a bad setting ends the worker).
         */
        void recover(RuntimeException failure);
    }

    /** Registers the elastic package's recovery (its {@code Elastic} class does, when loaded). */
    public static void recoverStartsWith(StartRecovery recovery) {
        startRecovery = recovery;
    }

    /**
     * The first join of the process, from {@code env}, failed with {@code failure}: in an elastic worker this waits for
     * the launcher's next job and joins it, as the workers that survived into the failed job do; elsewhere it rethrows.
     */
    public static void recoverStart(Map<String, String> env, RuntimeException failure) {
        if (KoloSettings.ELASTIC_WORKER.ifSet(env).isEmpty()) {
            throw failure;
        }
        StartRecovery r = startRecovery;
        if (r == null) {
            try {
                // Loading it registers its recovery; a program that calls Kolo.init() first has not loaded it yet.
                Class.forName("io.kolo.elastic.Elastic", true, ElasticScope.class.getClassLoader());
            } catch (ClassNotFoundException e) {
                throw new IllegalStateException("io.kolo.elastic is missing from kolo-core", e);
            }
            r = startRecovery;
        }
        r.recover(failure);
    }

    /** The process joined the job {@code env} describes. */
    public static synchronized void joined(Map<String, String> env) {
        elasticJob = KoloSettings.ELASTIC_WORKER.ifSet(env).isPresent();
        update();
    }

    /** The process left its job. */
    public static synchronized void left() {
        elasticJob = false;
        update();
    }

    /** {@code Elastic.run} starts (it may nest). */
    public static synchronized void enter() {
        depth++;
        update();
    }

    /** {@code Elastic.run} ends, by return or throw. */
    public static synchronized void exit() {
        depth--;
        update();
    }

    /** Whether the facade must refuse a collective now. */
    public static boolean refusing() {
        return refusing;
    }

    private static void update() {
        refusing = elasticJob && depth == 0;
    }
}
