package io.kolo.bootstrap;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A {@link LazyLogger} logs where {@code System.getLogger} of the same name logs, at the levels it allows. */
class LazyLoggerTest {
    /** A class of its own, so that no other test configures the logger of its name. */
    private static final class Owner {
    }

    @Test
    void logsThroughTheLoggerOfItsClassName() {
        System.Logger lazy = LazyLogger.of(Owner.class);
        assertEquals(Owner.class.getName(), lazy.getName());
        CapturedLog log = CapturedLog.of(Owner.class.getName());
        Logger jul = log.logger();
        try {
            assertTrue(lazy.isLoggable(System.Logger.Level.WARNING));
            assertFalse(lazy.isLoggable(System.Logger.Level.DEBUG), "the JDK's default level is INFO");
            lazy.log(System.Logger.Level.DEBUG, "not shown");
            IllegalStateException thrown = new IllegalStateException("why");
            lazy.log(System.Logger.Level.WARNING, "rank {0} lost {1}", 3, "rank 1");
            lazy.log(System.Logger.Level.ERROR, "failed", thrown);
            List<LogRecord> records = log.records();
            assertEquals(2, records.size(), "DEBUG is below the level: only WARNING and ERROR arrive");
            assertEquals(java.util.logging.Level.WARNING, records.get(0).getLevel());
            assertEquals("rank {0} lost {1}", records.get(0).getMessage());
            assertEquals(List.of(3, "rank 1"), List.of(records.get(0).getParameters()));
            assertNull(records.get(0).getThrown());
            assertEquals(java.util.logging.Level.SEVERE, records.get(1).getLevel());
            assertSame(thrown, records.get(1).getThrown());

            jul.setLevel(java.util.logging.Level.FINE);
            assertTrue(lazy.isLoggable(System.Logger.Level.DEBUG), "a level set later applies");
        } finally {
            log.close();
            jul.setLevel(null);
        }
    }
}
