package io.kolo.launch;

import io.kolo.Communicator;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/** Ranks as threads of this JVM, each joining from the variables an embedder built for it, as a separate process would. */
final class LaunchedRanks {
    interface Body {
        Object run(Communicator comm) throws Exception;
    }

    private LaunchedRanks() {
    }

    /** What each rank returned or threw, in rank order; a rank still running after {@code seconds} is a failure. */
    static List<Object> run(List<Map<String, String>> envs, long seconds, Body body) throws InterruptedException {
        ExecutorService pool = Executors.newFixedThreadPool(envs.size());
        try {
            List<Future<Object>> futures = new ArrayList<>();
            for (Map<String, String> env : envs) {
                futures.add(pool.submit(() -> {
                    try (Communicator c = Communicator.fromEnvironment(env)) {
                        return body.run(c);
                    }
                }));
            }
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
            List<Object> out = new ArrayList<>();
            for (Future<Object> f : futures) {
                try {
                    out.add(f.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS));
                } catch (ExecutionException e) {
                    out.add(e.getCause());
                } catch (TimeoutException e) {
                    throw new AssertionError("a rank did not finish within " + seconds + " s");
                }
            }
            return out;
        } finally {
            pool.shutdownNow();
        }
    }
}
