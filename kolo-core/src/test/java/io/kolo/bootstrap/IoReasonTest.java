package io.kolo.bootstrap;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

class IoReasonTest {

    @Test
    void theShellsWordsForWhatTheJdkReportsAsOnlyAPath(@TempDir Path dir) throws IOException {
        Path missing = dir.resolve("no/such/t.json");
        IOException e = assertThrows(IOException.class, () -> Files.writeString(missing, "x"));
        assertEquals("no such file or directory", IoReason.of(e));
        assertEquals(missing + ": no such file or directory", IoReason.withFile(e));

        Path file = Files.writeString(dir.resolve("f"), "x");
        e = assertThrows(IOException.class, () -> Files.createDirectory(file));
        assertEquals("it already exists", IoReason.of(e));
        // Where the JDK keeps the operating system's words, those are the reason.
        e = assertThrows(IOException.class, () -> Files.writeString(file.resolve("child"), "x"));
        assertEquals(file.resolve("child") + ": Not a directory", IoReason.withFile(e));
        assertEquals("Not a directory", IoReason.withFile(e, file.resolve("child")), "the message names it already");
        assertEquals(file.resolve("child") + ": Not a directory", IoReason.withFile(e, file));
    }

    @Test
    void otherExceptionsKeepTheirMessage() {
        assertEquals("connection reset", IoReason.of(new IOException("connection reset")));
        assertEquals("EOFException", IoReason.of(new java.io.EOFException()));
    }
}
