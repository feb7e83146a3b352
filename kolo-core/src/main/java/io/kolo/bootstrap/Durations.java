package io.kolo.bootstrap;

import java.time.Duration;
import java.util.Locale;

/** How a timeout reads in Kolo's messages: "60 s", "1.5 s", "200 ms". */
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
