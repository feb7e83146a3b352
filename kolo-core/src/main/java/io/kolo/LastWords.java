package io.kolo;

import io.kolo.bootstrap.KeyValueStore;
import io.kolo.bootstrap.LazyLogger;
import io.kolo.bootstrap.StoreKeys;

import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A rank's last words: when its JVM ends through an uncaught exception, or through {@code System.exit} while it is
 * still in a job, it records why in the job's store (the exception's type and first line, or where exit was called),
 * so that every other rank and the launcher can say "rank 2 failed: IllegalStateException: injected failure (exit code
 * 1)" instead of an exit code alone. A rank killed outright (SIGKILL, the OOM killer) has no last words; its exit code
 * says that much.
 *
 * <p>A rank that leaves its job ({@code Kolo.shutdown()}) is still heard until this process ends or joins another job:
 * programs shut down in a {@code finally} block, which runs before the exception that unwinds through it is uncaught.
 */
final class LastWords {
    private static final System.Logger LOG = LazyLogger.of(LastWords.class);
    /**
     * The ranks of this process that are in a job now (several in one JVM under Spark, or in tests), and those that
     * left their job since this process last joined one.
     */
    private static final List<Member> MEMBERS = new CopyOnWriteArrayList<>();
    /** The members that left their job, with the store connections they keep open for their last words. */
    private static final List<Departed> DEPARTED = new java.util.ArrayList<>();
    private static boolean installed;

    /**
     * Equal only to itself, so that a handle removes exactly the member it added; not a record, whose equals links an
     * invokedynamic call site on its first call, which a rank's shutdown paid for in tens of milliseconds
     * (docs/performance.md, "First run").
     */
    private static final class Member {
        final int rank;
        final KeyValueStore store;

        Member(int rank, KeyValueStore store) {
            this.rank = rank;
            this.store = store;
        }
    }

    private record Departed(Member member, AutoCloseable connection) {
    }

    private LastWords() {
    }

    /**
     * Records {@code rank}'s last words in {@code store}, which {@code connection} holds open, until the returned handle
     * is closed (the rank left the job) and then, when {@code hearAfterLeaving}, until this process ends or joins
     * another job: only then is {@code connection} closed. Without {@code hearAfterLeaving} (a store this process
     * serves, which must stop when the job ends), the handle closes it at once.
     */
    static AutoCloseable listen(int rank, KeyValueStore store, AutoCloseable connection, boolean hearAfterLeaving) {
        install();
        forgetDeparted();
        Member m = new Member(rank, store);
        MEMBERS.add(m);
        return () -> {
            if (hearAfterLeaving) {
                synchronized (DEPARTED) {
                    DEPARTED.add(new Departed(m, connection));
                }
                return;
            }
            MEMBERS.remove(m);
            connection.close();
        };
    }

    /** A new job: what ranks of earlier ones say no longer concerns anyone. */
    private static void forgetDeparted() {
        synchronized (DEPARTED) {
            for (Departed d : DEPARTED) {
                MEMBERS.remove(d.member());
                try {
                    d.connection().close();
                } catch (Exception e) {
                    LOG.log(System.Logger.Level.DEBUG, "could not close an earlier job's store connection", e);
                }
            }
            DEPARTED.clear();
        }
    }

    private static synchronized void install() {
        if (installed) {
            return;
        }
        installed = true;
        Thread.UncaughtExceptionHandler previous = Thread.getDefaultUncaughtExceptionHandler();
        Thread.setDefaultUncaughtExceptionHandler((thread, error) -> {
            record(describe(error));
            if (previous != null) {
                previous.uncaughtException(thread, error);
            } else {
                // What the JDK prints when no handler is set (its own path would call back into this handler).
                System.err.print("Exception in thread \"" + thread.getName() + "\" ");
                error.printStackTrace(System.err);
            }
        });
        Runtime.getRuntime().addShutdownHook(Thread.ofPlatform().name("kolo-last-words").unstarted(() -> {
            String exit = exitCaller();
            if (exit != null) {
                record(exit);
            }
        }));
    }

    /** "IllegalStateException: injected failure at iteration 20": the type and the message's first line. */
    static String describe(Throwable error) {
        String message = error.getMessage();
        String first = message == null ? "" : message.strip().lines().findFirst().orElse("");
        return error.getClass().getSimpleName() + (first.isEmpty() ? "" : ": " + first);
    }

    private static void record(String words) {
        for (Member m : MEMBERS) {
            try {
                m.store.putIfAbsent(StoreKeys.lastWords(m.rank), words);
                m.store.putIfAbsent(StoreKeys.FIRST_LAST_WORDS, StoreKeys.firstFailure(m.rank, words));
            } catch (RuntimeException storeGone) {
                LOG.log(System.Logger.Level.DEBUG, "could not record rank " + m.rank + "'s last words", storeGone);
            }
        }
    }

    /**
     * While the JVM shuts down: where the program called {@code System.exit} (or {@code Runtime.exit}/{@code halt}), or
     * which signal ended it; null when it ends because its last thread finished.
     */
    private static String exitCaller() {
        for (Map.Entry<Thread, StackTraceElement[]> t : Thread.getAllStackTraces().entrySet()) {
            StackTraceElement[] stack = t.getValue();
            for (int i = 0; i < stack.length; i++) {
                if (!stack[i].getClassName().equals("java.lang.Shutdown")) {
                    continue;
                }
                for (int j = i + 1; j < stack.length; j++) {
                    String cls = stack[j].getClassName();
                    if (cls.equals("java.lang.Terminator") || cls.startsWith("jdk.internal.misc.Signal")) {
                        return "terminated by a signal (SIGTERM, SIGINT or SIGHUP)";
                    }
                    if (!cls.equals("java.lang.Shutdown") && !cls.equals("java.lang.Runtime")
                            && !cls.equals("java.lang.System")) {
                        StackTraceElement at = stack[j];
                        return "called System.exit at " + at.getClassName() + "." + at.getMethodName() + "("
                                + (at.getFileName() == null ? "unknown source" : at.getFileName() + ":" + at.getLineNumber())
                                + ")";
                    }
                }
            }
        }
        return null;
    }
}
