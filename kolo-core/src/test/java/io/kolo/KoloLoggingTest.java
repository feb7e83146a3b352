package io.kolo;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** KOLO_LOG_LEVEL moves every io.kolo logger (they log through System.Logger) and nothing else. */
class KoloLoggingTest {
    private static final System.Logger ENGINE = System.getLogger("io.kolo.engine.Engine");
    private static final System.Logger OTHER = System.getLogger("org.example.App");

    @AfterEach
    void reset() {
        KoloLogging.reset();
    }

    @Test
    void debugOpensKolosDebugLinesOnly() {
        assertFalse(ENGINE.isLoggable(System.Logger.Level.DEBUG), "the JDK's default is INFO");
        KoloLogging.apply("debug");
        assertTrue(ENGINE.isLoggable(System.Logger.Level.DEBUG));
        assertFalse(ENGINE.isLoggable(System.Logger.Level.TRACE));
        assertFalse(OTHER.isLoggable(System.Logger.Level.DEBUG), "an application's loggers are its own");
        KoloLogging.apply("trace");
        assertTrue(ENGINE.isLoggable(System.Logger.Level.TRACE));
    }

    @Test
    void errorSilencesKolosWarnings() {
        KoloLogging.apply("error");
        assertFalse(ENGINE.isLoggable(System.Logger.Level.WARNING));
        assertTrue(ENGINE.isLoggable(System.Logger.Level.ERROR));
        assertTrue(OTHER.isLoggable(System.Logger.Level.WARNING));
    }
}
