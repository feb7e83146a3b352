package io.kolo.launcher.workers;

import io.kolo.Kolo;
import io.kolo.ReduceOp;
import io.kolo.bootstrap.ElasticGeneration;
import io.kolo.bootstrap.KeyValueStore;
import io.kolo.bootstrap.RendezvousClient;
import io.kolo.bootstrap.StoreKeys;
import io.kolo.elastic.Elastic;
import io.kolo.elastic.ObjectState;
import io.kolo.elastic.WorkerRemovedException;
import io.kolo.launch.JobSecret;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.Map;

/**
 * An elastic program for the launcher's tests. {@code ElasticCounter DIR STEPS MILLIS [FAIL_AT]}: counts STEPS steps,
 * each an allreduce (checking that every rank is at the same step) and a commit, MILLIS apart; with FAIL_AT, every
 * worker exits with code 3 whenever it reaches that step (a bug every rank hits). A file DIR/throw.WORKER holding a
 * step makes that worker's body throw an IllegalStateException there (a bug of its own). Writes its PID to
 * DIR/pid.WORKER and one line per commit, "commit STEP rank R size S", to DIR/log.WORKER; "reset rank R size S"
 * after every re-join; prints "worker W done at STEP as rank R of S" at the end. A worker started into the generation
 * that {@code COUNTER_DIE_AT_START_OF_GENERATION} names exits with code 5 at once, before joining (a replacement that
 * dies while the job re-forms); so does the worker that {@code COUNTER_DIE_AT_START_AS_WORKER} names. With
 * {@code COUNTER_FINISH_EARLY=W:STEP}, worker W exits with code 0 after committing STEP, the others training on. The
 * worker that {@code COUNTER_DIE_AFTER_ADDRESS_AS_WORKER} names exits with code 5 (halting, as a crash would) as soon
 * as its first job's store holds its data-plane address (KOLO_TRANSPORT=tcp), usually before its peers connect to it.
 */
public final class ElasticCounter {
    private ElasticCounter() {
    }

    public static void main(String[] args) throws Exception {
        Path dir = Path.of(args[0]);
        long steps = Long.parseLong(args[1]);
        long millis = Long.parseLong(args[2]);
        long failAt = args.length > 3 ? Long.parseLong(args[3]) : -1;
        String id = System.getenv("KOLO_ELASTIC_WORKER");
        String dieIn = System.getenv("COUNTER_DIE_AT_START_OF_GENERATION");
        if (dieIn != null && dieIn.equals(System.getenv("KOLO_ELASTIC_GENERATION"))
                || id.equals(System.getenv("COUNTER_DIE_AT_START_AS_WORKER"))) {
            System.err.println("worker " + id + " dies as it starts");
            System.exit(5);
        }
        if (id.equals(System.getenv("COUNTER_DIE_AFTER_ADDRESS_AS_WORKER"))) {
            dieOncePublished();
        }
        Files.writeString(dir.resolve("pid." + id), Long.toString(ProcessHandle.current().pid()));
        Path log = dir.resolve("log." + id);
        Path throwAt = dir.resolve("throw." + id);
        long throwStep = Files.exists(throwAt) ? Long.parseLong(Files.readString(throwAt).trim()) : -1;
        ObjectState state = new ObjectState(Map.of("step", 0L));
        state.registerResetCallback(() -> append(log, "reset rank " + Kolo.rank() + " size " + Kolo.size()));
        try {
            long done = Elastic.run(state, s -> {
                for (long step = s.<Long>get("step"); step < steps; step++) {
                    if (step == failAt) {
                        System.err.println("worker " + id + " fails at step " + step);
                        System.exit(3);
                    }
                    if (step == throwStep) {
                        throw new IllegalStateException("worker " + id + " throws at step " + step);
                    }
                    long[] lowest = {step};
                    long[] highest = {step};
                    Kolo.allreduce(lowest, ReduceOp.MIN);
                    Kolo.allreduce(highest, ReduceOp.MAX);
                    if (lowest[0] != highest[0]) {
                        throw new IllegalStateException("ranks disagree on the step: " + lowest[0] + " to "
                                + highest[0]);
                    }
                    s.set("step", step + 1);
                    s.commit();
                    append(log, "commit " + (step + 1) + " rank " + Kolo.rank() + " size " + Kolo.size());
                    if ((id + ":" + (step + 1)).equals(System.getenv("COUNTER_FINISH_EARLY"))) {
                        System.out.println("worker " + id + " finishes early at " + (step + 1));
                        System.exit(0);
                    }
                    Thread.sleep(millis);
                }
                return s.<Long>get("step");
            });
            System.out.println("worker " + id + " done at " + done + " as rank " + Kolo.rank() + " of " + Kolo.size());
        } catch (WorkerRemovedException e) {
            System.out.println("worker " + id + " removed: " + e.getMessage());
        } finally {
            Kolo.shutdown();
        }
    }

    private static void append(Path log, String line) {
        try {
            Files.writeString(log, line + "\n", StandardOpenOption.CREATE, StandardOpenOption.APPEND);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Halts this worker once its data-plane address is in its first job's store: watched over a connection of its own. */
    private static void dieOncePublished() {
        Map<String, String> env = System.getenv();
        KeyValueStore client = RendezvousClient.connect(new InetSocketAddress(env.get("KOLO_RENDEZVOUS_ADDR"),
                        Integer.parseInt(env.get("KOLO_RENDEZVOUS_PORT"))),
                JobSecret.fromHex(env.get("KOLO_SECRET")), Duration.ofSeconds(10));
        KeyValueStore job = ElasticGeneration.scope(client, Integer.parseInt(env.get("KOLO_ELASTIC_GENERATION")));
        String key = StoreKeys.address(Integer.parseInt(env.get("KOLO_RANK")));
        Thread.ofPlatform().daemon().start(() -> {
            while (job.tryGet(key).isEmpty()) {
                java.util.concurrent.locks.LockSupport.parkNanos(500_000);
            }
            System.err.println("worker " + env.get("KOLO_ELASTIC_WORKER") + " dies after publishing its address");
            Runtime.getRuntime().halt(5);
        });
    }
}
