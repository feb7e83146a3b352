package io.kolo.launcher;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

/** Lets test fixtures in other packages run {@code kolo} commands in-process. */
public final class TestAccess {
    private TestAccess() {
    }

    /** Runs {@code kolo ARGS} in this JVM, output discarded unless it fails; the exit code. */
    public static int kolo(String... args) {
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        int code;
        try (PrintStream ps = new PrintStream(buf, true, StandardCharsets.UTF_8)) {
            code = Main.run(args, ps, ps);
        }
        if (code != 0) {
            System.err.print(buf.toString(StandardCharsets.UTF_8));
        }
        return code;
    }
}
