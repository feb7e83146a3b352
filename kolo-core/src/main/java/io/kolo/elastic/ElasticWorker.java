package io.kolo.elastic;

import io.kolo.KoloException;
import io.kolo.KoloTimeoutException;
import io.kolo.bootstrap.ElasticGeneration;
import io.kolo.bootstrap.KeyValueStore;
import io.kolo.bootstrap.KoloSettings;
import io.kolo.bootstrap.RendezvousClient;
import io.kolo.launch.JobSecret;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;

/**
 * This process as a worker of an elastic {@code kolo run}: which generation (launcher's job) it is in, and how it
 * finds its place in the next one, through its own connection to the launcher's store (the job's connection goes
 * with the job at every reset).
 */
final class ElasticWorker {
    private static final Duration POLL = Duration.ofMillis(100);
    private static volatile ElasticWorker current;

    private final Map<String, String> env;
    private final String id;
    private final Duration timeout;
    private volatile int generation;
    private KeyValueStore store;

    private ElasticWorker(Map<String, String> env, String id, int generation, Duration timeout) {
        this.env = Map.copyOf(env);
        this.id = id;
        this.generation = generation;
        this.timeout = timeout;
    }

    /** This process's worker, or empty when it was not started by an elastic launcher. */
    static Optional<ElasticWorker> current() {
        ElasticWorker w = current;
        if (w == null) {
            synchronized (ElasticWorker.class) {
                if (current == null) {
                    current = of(System.getenv());
                }
                w = current;
            }
        }
        return w.id == null ? Optional.empty() : Optional.of(w);
    }

    static ElasticWorker of(Map<String, String> env) {
        String id = KoloSettings.ELASTIC_WORKER.ifSet(env).orElse(null);
        int generation = ElasticGeneration.of(env).orElse(0);
        return new ElasticWorker(env, id, generation,
                Duration.ofSeconds(KoloSettings.ELASTIC_TIMEOUT_SECONDS.from(env)));
    }

    String id() {
        return id;
    }

    /** The generation this worker is in (or last was in). */
    int generation() {
        return generation;
    }

    /** The newest generation the launcher has published: one round trip to its store. */
    synchronized int latestPublished() {
        return store().tryGet(ElasticGeneration.LATEST).map(Integer::parseInt).orElse(generation);
    }

    /**
     * Waits for a generation newer than this worker's, at most {@code KOLO_ELASTIC_TIMEOUT_SECONDS}, and returns the
     * environment to join it with.
     *
     * @throws WorkerRemovedException when the new generation has no place for this worker
     * @throws KoloTimeoutException   when the launcher publishes none in time
     */
    synchronized Map<String, String> awaitNextJob() {
        long deadline = System.nanoTime() + timeout.toNanos();
        int latest;
        while ((latest = latestPublished()) <= generation) {
            Optional<String> finished = store().tryGet(ElasticGeneration.FINISHED);
            if (finished.isPresent()) {
                throw new KoloException("worker " + id + " lost job " + generation + ", and the launcher starts no next"
                        + " job: " + finished.get() + ", which ends the resets; every worker must return from"
                        + " Elastic.run at the same step");
            }
            if (System.nanoTime() - deadline > 0) {
                throw new KoloTimeoutException("worker " + id + " waited " + timeout.toSeconds() + " s ("
                        + KoloSettings.ELASTIC_TIMEOUT_SECONDS.name() + ") for the launcher's next job after job "
                        + generation + " failed; is the launcher still running?");
            }
            try {
                Thread.sleep(POLL);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new KoloException("interrupted while waiting for the launcher's next job", e);
            }
        }
        Optional<String> placed = store().tryGet(ElasticGeneration.assignmentKey(latest, id));
        generation = latest;
        if (placed.isEmpty()) {
            String why = store().tryGet(ElasticGeneration.reasonKey(latest)).orElse("the job changed");
            throw new WorkerRemovedException("worker " + id + " has no place in the launcher's job " + latest + " ("
                    + why + "): leaving");
        }
        return ElasticGeneration.Assignment.parse(placed.get()).applyTo(env, latest);
    }

    private KeyValueStore store() {
        if (store == null) {
            InetSocketAddress at = new InetSocketAddress(KoloSettings.RENDEZVOUS_ADDR.from(env),
                    KoloSettings.RENDEZVOUS_PORT.from(env));
            store = RendezvousClient.connect(at, JobSecret.fromHex(KoloSettings.SECRET.from(env)),
                    Duration.ofSeconds(KoloSettings.START_TIMEOUT_SECONDS.from(env)));
        }
        return store;
    }
}
