package io.kolo.bootstrap;

import java.time.Duration;
import java.util.Locale;

/**
 * How a timeout reads in Kolo's messages, in one place so that every message says it alike: whole seconds, tenths of a
 * second from one second up, milliseconds below.
 */
public final class Durations {
    private Durations() {
    }

    public static String describe(Duration d) {
        long ms = d.toMillis();
        if (ms % 1000 == 0) {
            return (ms / 1000) + " s";
        }
        return ms < 1000 ? ms + " ms" : String.format(Locale.ROOT, "%.1f s", ms / 1000.0);
    }
}
