package io.kolo.launcher;

import sun.misc.Signal;
import sun.misc.SignalHandler;

/**
 * Which signal is stopping this launcher: the exit code another node should be told, since a shutdown hook cannot
 * ask. SIGINT (Ctrl-C) is 130 and SIGTERM 143, as the JVM's own exit code says for this process. The JVM's handlers
 * stay in charge: each signal is noted, then handed to the handler it replaced, which starts the shutdown.
 * {@code sun.misc.Signal} (module jdk.unsupported) is the JDK's only way to see which signal arrived.
 */
final class StopSignal {
    static final int SIGINT = 130;
    static final int SIGTERM = 143;
    private static volatile int code = SIGTERM;

    private StopSignal() {
    }

    /** Notes SIGINT and SIGTERM from now on; in a launcher process of its own only (never in-process tests). */
    static synchronized void watch() {
        note("INT", SIGINT);
        note("TERM", SIGTERM);
    }

    /** The exit code of the signal that stopped this launcher (SIGTERM's when none was noted). */
    static int code() {
        return code;
    }

    private static void note(String name, int exitCode) {
        try {
            Signal signal = new Signal(name);
            SignalHandler[] previous = new SignalHandler[1];
            previous[0] = Signal.handle(signal, sig -> {
                code = exitCode;
                previous[0].handle(sig);
            });
            if (previous[0] == SignalHandler.SIG_IGN || previous[0] == SignalHandler.SIG_DFL) {
                // Ignored (started in the background) or the JVM's handlers are off (-Xrs): left as it was.
                Signal.handle(signal, previous[0]);
            }
        } catch (IllegalArgumentException unavailable) {
            // Not catchable here: stopping reports SIGTERM's code.
        }
    }
}
