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

    /** In every worker's log ({@code log.*} in {@code dir}) the committed step never decreases, and within one job it rises by one. */
    public static void assertCommitsNeverGoBack(java.nio.file.Path dir) throws java.io.IOException {
        try (java.util.stream.Stream<java.nio.file.Path> files = java.nio.file.Files.list(dir)) {
            for (java.nio.file.Path f : files.filter(p -> p.getFileName().toString().startsWith("log.")).toList()) {
                long last = -1;
                boolean reset = true;
                for (String line : java.nio.file.Files.readAllLines(f)) {
                    if (line.startsWith("reset ")) {
                        reset = true;
                        continue;
                    }
                    long step = Long.parseLong(line.split(" ")[1]);
                    org.junit.jupiter.api.Assertions.assertTrue(reset ? step >= last : step == last + 1,
                            f.getFileName() + ": " + step + " after " + last);
                    last = step;
                    reset = false;
                }
            }
        }
    }
}
