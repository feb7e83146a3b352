package io.kolo.bench;

import io.kolo.Communicator;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * Runs the real bench worker on ranks that are threads of this JVM (Communicator.local): the same
 * measurement code as {@code kolo bench}, without starting processes, for fast tests of the harness.
 */
final class InJvmKolo implements BenchSuite.KoloRunner {
    private final int ranks;
    private final Path dir;

    InJvmKolo(int ranks, Path dir) {
        this.ranks = ranks;
        this.dir = dir;
    }

    @Override
    public List<Measurement> run(String transport, Collective collective, ElementType type, Memory memory,
                                 List<Step> steps, SliceGate gate) throws InterruptedException {
        Path results = dir.resolve("results-" + transport + "-" + collective.id() + ".txt");
        List<Communicator> comms = Communicator.local(ranks);
        ExecutorService pool = Executors.newFixedThreadPool(ranks);
        try {
            List<Future<?>> done = new ArrayList<>();
            for (Communicator c : comms) {
                BenchWorker worker = new BenchWorker(c, collective, type, memory);
                if (gate != null) {
                    worker.takeTurns(gate);
                }
                done.add(pool.submit(() -> worker.run(steps, results)));
            }
            for (Future<?> f : done) {
                f.get(120, TimeUnit.SECONDS);
            }
            List<Measurement> out = new ArrayList<>();
            for (String line : Files.readAllLines(results)) {
                Measurement.parseLine(line).ifPresent(out::add);
            }
            return out;
        } catch (IOException | java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
            throw new BenchSuite.BenchFailure(e.toString());
        } finally {
            pool.shutdownNow();
            comms.forEach(Communicator::close);
        }
    }
}
