package io.kolo.examples;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * Where an example writes at its end (a checkpoint, results), checked at its start: a run takes minutes, and learning
 * only then that the place cannot be written loses them.
 */
final class Writable {
    private Writable() {
    }

    /** Makes {@code dir}; throws with the reason when it cannot be made or written. */
    static void directory(Path dir) {
        try {
            Files.createDirectories(dir);
            if (!Files.isWritable(dir)) {
                throw new IllegalArgumentException("Permission denied");
            }
        } catch (IOException e) {
            throw new IllegalArgumentException(reason(e));
        }
    }

    /** Makes {@code file}'s directory and opens the file (removing it again if this made it), or throws with why. */
    static void file(Path file) {
        if (Files.isDirectory(file)) {
            throw new IllegalArgumentException("it is a directory");
        }
        try {
            Path parent = file.toAbsolutePath().getParent();
            if (parent != null) {
                Files.createDirectories(parent);
            }
            boolean existed = Files.exists(file);
            try (OutputStream _ = Files.newOutputStream(file, StandardOpenOption.CREATE, StandardOpenOption.APPEND)) {
                // Opening is the check; an existing file keeps its contents until the results replace them.
            }
            if (!existed) {
                Files.delete(file);
            }
        } catch (IOException e) {
            throw new IllegalArgumentException(reason(e));
        }
    }

    private static String reason(IOException e) {
        if (e instanceof FileAlreadyExistsException f) {
            return f.getFile() + " is a file, not a directory";
        }
        return e instanceof FileSystemException f && f.getReason() != null ? f.getReason() : e.toString();
    }
}
