package io.kolo.launcher;

import org.junit.jupiter.api.Assumptions;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Whether Ctrl-C (SIGINT) can reach a process this test starts. A process started from a non-interactive shell in the
 * background inherits SIGINT as ignored, and so do its children; a JVM then installs no handler for it and never
 * sees it (as a terminal's Ctrl-C never reaches a background job either).
 */
public final class Sigint {
    private Sigint() {
    }

    /** True when this process, and so every process it starts, ignores SIGINT. */
    public static boolean ignored() {
        try {
            String mask = Files.readAllLines(Path.of("/proc/self/status")).stream()
                    .filter(l -> l.startsWith("SigIgn:")).findFirst().orElse("SigIgn: 0").substring(7).trim();
            return (Long.parseLong(mask, 16) & (1L << 1)) != 0;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Skips the calling test, saying why, when SIGINT cannot be delivered. */
    public static void assumeDeliverable() {
        Assumptions.assumeFalse(ignored(), "skipped: SIGINT is ignored in this process tree (started in the"
                + " background), so Ctrl-C can't be delivered");
    }
}
