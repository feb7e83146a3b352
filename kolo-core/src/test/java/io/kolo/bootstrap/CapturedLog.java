package io.kolo.bootstrap;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/**
 * What one logger of the JDK's default {@link System.Logger} backend (java.util.logging) receives while this is open,
 * for tests of what Kolo logs.
 *
 * <pre>{@code
 * try (CapturedLog log = CapturedLog.of("io.kolo.engine.Autotuner")) {
 *     ...
 *     assertEquals(1, log.records().size());
 * }
 * }</pre>
 */
public final class CapturedLog extends Handler implements AutoCloseable {
    private final Logger logger;
    private final List<LogRecord> records = Collections.synchronizedList(new ArrayList<>());

    private CapturedLog(Logger logger) {
        this.logger = logger;
    }

    /** Starts capturing what the logger named {@code name} receives. */
    public static CapturedLog of(String name) {
        CapturedLog log = new CapturedLog(Logger.getLogger(name));
        log.logger.addHandler(log);
        return log;
    }

    /** The logger captured. */
    public Logger logger() {
        return logger;
    }

    /** The records received so far, in order. */
    public List<LogRecord> records() {
        synchronized (records) {
            return List.copyOf(records);
        }
    }

    @Override
    public void publish(LogRecord record) {
        records.add(record);
    }

    @Override
    public void flush() {
    }

    /** Stops capturing. */
    @Override
    public void close() {
        logger.removeHandler(this);
    }
}
