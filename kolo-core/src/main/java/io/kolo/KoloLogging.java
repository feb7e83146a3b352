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
    private static ConsoleHandler handler;

    private KoloLogging() {
    }

    /**
     * Made on first use: getting a java.util.logging logger sets up the whole LogManager (reads its configuration,
     * makes the root handler), which costs a starting rank tens of milliseconds (docs/performance.md, "First run"),
     * and with KOLO_LOG_LEVEL unset nothing here is needed.
     */
    private static final class KoloLogger {
        // java.util.logging holds loggers weakly: a level set on a logger nobody references would be forgotten.
        static final Logger LOGGER = Logger.getLogger("io.kolo");
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
        Logger kolo = KoloLogger.LOGGER;
        kolo.setLevel(jul);
        if (handler != null) {
            kolo.removeHandler(handler);
            handler = null;
        }
        if (jul.intValue() < Level.INFO.intValue()) {
            handler = new ConsoleHandler();
            handler.setLevel(jul);
            kolo.addHandler(handler);
            kolo.setUseParentHandlers(false);
        } else {
            kolo.setUseParentHandlers(true);
        }
    }

    /** Back to the JDK's defaults (tests). */
    static synchronized void reset() {
        KoloLogger.LOGGER.setLevel(null);
        if (handler != null) {
            KoloLogger.LOGGER.removeHandler(handler);
            handler = null;
        }
        KoloLogger.LOGGER.setUseParentHandlers(true);
    }
}
