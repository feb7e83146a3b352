package io.kolo.bootstrap;

import java.util.ResourceBundle;

/**
 * A {@link System.Logger} that asks {@link System#getLogger} for the real one on its first use, for a class's
 * {@code static final} logger. {@code System.getLogger} from an application module looks for logger finders on the
 * whole class path at its first call, opening every jar there; a starting rank made that call while its first class
 * with a logger initialised, though a job that goes well logs nothing (docs/performance.md, "First run").
 *
 * <pre>{@code
 * private static final System.Logger LOG = LazyLogger.of(ShmTransport.class);
 * }</pre>
 */
public final class LazyLogger implements System.Logger {
    private final String name;
    private volatile System.Logger logger;

    private LazyLogger(String name) {
        this.name = name;
    }

    /** The logger named after {@code owner}, as {@code System.getLogger(owner.getName())} would be. */
    public static System.Logger of(Class<?> owner) {
        return new LazyLogger(owner.getName());
    }

    private System.Logger logger() {
        System.Logger l = logger;
        if (l == null) {
            // Two threads may both look it up; either logger serves.
            l = System.getLogger(name);
            logger = l;
        }
        return l;
    }

    @Override
    public String getName() {
        return name;
    }

    @Override
    public boolean isLoggable(Level level) {
        return logger().isLoggable(level);
    }

    @Override
    public void log(Level level, ResourceBundle bundle, String msg, Throwable thrown) {
        logger().log(level, bundle, msg, thrown);
    }

    @Override
    public void log(Level level, ResourceBundle bundle, String format, Object... params) {
        logger().log(level, bundle, format, params);
    }
}
