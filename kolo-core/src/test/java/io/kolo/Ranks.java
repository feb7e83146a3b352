package io.kolo;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/** Runs one body per rank, each on its own thread over a fresh in-JVM group, and collects what each returned or threw. */
final class Ranks {
    interface Body<T> {
        T run(Communicator comm) throws Exception;
    }

    /** What one rank ended with. */
    record Outcome<T>(T value, Throwable error) {
        T get() {
            if (error != null) {
                throw new AssertionError("rank failed: " + error, error);
            }
            return value;
        }
    }

    private Ranks() {
    }

    static <T> List<T> run(int size, Body<T> body) {
        return run(size, Map.of(), body);
    }

    static <T> List<T> run(int size, Map<String, String> settings, Body<T> body) {
        List<Outcome<T>> outcomes = outcomes(size, settings, body);
        List<T> values = new ArrayList<>();
        for (Outcome<T> o : outcomes) {
            values.add(o.get());
        }
        return values;
    }

    static <T> List<Outcome<T>> outcomes(int size, Map<String, String> settings, Body<T> body) {
        return outcomes(Communicator.local(size, settings), body);
    }

    /** Ranks that believe they run {@code perHost} to a host on {@code hosts} hosts (in-JVM, packed host by host). */
    static <T> List<T> runHosts(int hosts, int perHost, Map<String, String> settings, Body<T> body) {
        List<T> values = new ArrayList<>();
        for (Outcome<T> o : outcomes(Communicator.localHosts(hosts, perHost, settings), body)) {
            values.add(o.get());
        }
        return values;
    }

    /** A free loopback port for a rendezvous store. */
    static int freePort() throws java.io.IOException {
        try (java.net.ServerSocket s = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    /**
     * One thread per rank, each joining the job from its own {@code KOLO_*} environment as a separate process
     * would; each element of the result is what that rank returned, or what it threw.
     */
    static List<Object> fromEnvironment(int size, java.util.function.IntFunction<Map<String, String>> envOf,
                                        Body<Object> body) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(size);
        try {
            List<Future<Object>> futures = new ArrayList<>();
            for (int r = 0; r < size; r++) {
                Map<String, String> env = envOf.apply(r);
                futures.add(pool.submit(() -> {
                    try (Communicator c = Communicator.fromEnvironment(env)) {
                        return body.run(c);
                    }
                }));
            }
            List<Object> out = new ArrayList<>();
            for (Future<Object> f : futures) {
                try {
                    out.add(f.get(90, TimeUnit.SECONDS));
                } catch (java.util.concurrent.ExecutionException e) {
                    out.add(e.getCause());
                }
            }
            return out;
        } finally {
            pool.shutdownNow();
        }
    }

    static <T> List<Outcome<T>> outcomes(List<Communicator> comms, Body<T> body) {
        int size = comms.size();
        ExecutorService pool = Executors.newFixedThreadPool(size);
        try {
            List<Future<T>> futures = new ArrayList<>();
            for (Communicator c : comms) {
                futures.add(pool.submit(() -> body.run(c)));
            }
            List<Outcome<T>> out = new ArrayList<>();
            for (Future<T> f : futures) {
                try {
                    out.add(new Outcome<>(f.get(120, TimeUnit.SECONDS), null));
                } catch (java.util.concurrent.ExecutionException e) {
                    out.add(new Outcome<>(null, e.getCause()));
                } catch (java.util.concurrent.TimeoutException e) {
                    throw new AssertionError("a rank hung for 120 s", e);
                }
            }
            return out;
        } catch (InterruptedException e) {
            throw new AssertionError(e);
        } finally {
            for (Communicator c : comms) {
                c.close();
            }
            pool.shutdownNow();
        }
    }
}
