package io.kolo;

import java.util.logging.ConsoleHandler;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * {@code KOLO_LOG_LEVEL} (Horovod's {@code HOROVOD_LOG_LEVEL}, {@code horovodrun --log-level}): how much Kolo's own
 * loggers say. Kolo logs through {@link System.Logger}; with the JDK's default backend (java.util.logging) this sets
 * the level of the {@code io.kolo} loggers and, below INFO, gives them a console handler of their own, since the root
 * handler prints INFO and above only. An application that routes {@code System.Logger} elsewhere (SLF4J, Log4j)
 * configures Kolo's levels there, under the logger names {@code io.kolo.*}.
 */
final class KoloLogging {
    // java.util.logging holds loggers weakly: a level set on a logger nobody references would be forgotten.
    private static final Logger KOLO = Logger.getLogger("io.kolo");
    private static ConsoleHandler handler;

    private KoloLogging() {
    }

    /** Applies a level word of {@link io.kolo.bootstrap.KoloSettings#LOG_LEVEL}; null leaves logging as it is. */
    static synchronized void apply(String level) {
        if (level == null) {
            return;
        }
        Level jul = switch (level) {
            case "trace" -> Level.FINEST;
            case "debug" -> Level.FINE;
            case "info" -> Level.INFO;
            case "warning" -> Level.WARNING;
            default -> Level.SEVERE;
        };
        KOLO.setLevel(jul);
        if (handler != null) {
            KOLO.removeHandler(handler);
            handler = null;
        }
        if (jul.intValue() < Level.INFO.intValue()) {
            handler = new ConsoleHandler();
            handler.setLevel(jul);
            KOLO.addHandler(handler);
            KOLO.setUseParentHandlers(false);
        } else {
            KOLO.setUseParentHandlers(true);
        }
    }

    /** Back to the JDK's defaults (tests). */
    static synchronized void reset() {
        KOLO.setLevel(null);
        if (handler != null) {
            KOLO.removeHandler(handler);
            handler = null;
        }
        KOLO.setUseParentHandlers(true);
    }
}
