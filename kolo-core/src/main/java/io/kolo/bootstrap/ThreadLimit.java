package io.kolo.bootstrap;

import io.kolo.KoloException;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Starting a rank's threads where the process may start no more: the JVM's "unable to create native thread" names no
 * limit, so this says which limits apply, how many threads the process runs, and what each rank needs.
 */
public final class ThreadLimit {
    /**
     * The platform threads a rank runs for the job's life: its engine, its stall watch and its data port's acceptor (the
     * rendezvous server serves every rank's connection from one thread).
     */
    public static final int PER_RANK = 3;

    private ThreadLimit() {
    }

    /**
     * Starts {@code builder}'s thread on {@code task}.
     *
     * @param what whose thread, for the message: "rank 3's engine"
     * @throws KoloException naming the limits when the process can start no more threads
     */
    public static Thread start(Thread.Builder.OfPlatform builder, Runnable task, String what) {
        try {
            return builder.start(task);
        } catch (OutOfMemoryError e) {
            throw explain(e, what);
        }
    }

    /** Starts a thread already made ({@link Thread#start}), with the same message as {@link #start}. */
    public static void start(Thread thread, String what) {
        try {
            thread.start();
        } catch (OutOfMemoryError e) {
            throw explain(e, what);
        }
    }

    /** One line: which limits, how many threads now, what each rank needs, what to do. */
    static KoloException explain(OutOfMemoryError e, String what) {
        return new KoloException("could not start " + what + " thread (" + e.getMessage() + "): this process runs "
                + read(Path.of("/proc/self/status"), "Threads:") + " threads against a limit of "
                + read(Path.of("/proc/self/limits"), "Max processes") + " processes per user (ulimit -u) and "
                + read(Path.of("/proc/sys/kernel/threads-max"), "") + " threads on this host (kernel.threads-max);"
                + " each rank needs about " + PER_RANK + " threads, times the ranks in one process: raise ulimit -u,"
                + " or run fewer ranks per process", e);
    }

    /** The first number on the line starting with {@code label}, or "an unknown number". */
    private static String read(Path file, String label) {
        try {
            for (String line : Files.readAllLines(file)) {
                if (line.startsWith(label)) {
                    String[] words = line.substring(label.length()).trim().split("\\s+");
                    return words.length > 0 && !words[0].isEmpty() ? words[0] : "an unknown number";
                }
            }
        } catch (IOException | RuntimeException unreadable) {
            // Not Linux, or out of descriptors as well.
        }
        return "an unknown number";
    }
}
