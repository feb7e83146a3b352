package io.kolo.bootstrap;

import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;

/**
 * Why a file could not be read or written, in the words the shell would use. The JDK's file exceptions often carry
 * only the path as their message ({@code cannot write /a/b: /a/b}), which names the file twice and the cause not at
 * all.
 */
public final class IoReason {
    private IoReason() {
    }

    /**
     * The reason: "no such file or directory", "permission denied", ..., the operating system's own words where the
     * exception holds them, else its message.
     *
     * <pre>{@code
     * } catch (IOException e) {
     *     throw new UsageException("cannot read hostfile " + file + ": " + IoReason.of(e));
     * }
     * }</pre>
     */
    public static String of(IOException e) {
        if (e instanceof FileSystemException f && f.getReason() != null) {
            return f.getReason();
        }
        return switch (e) {
            case NoSuchFileException n -> "no such file or directory";
            case AccessDeniedException a -> "permission denied";
            case FileAlreadyExistsException a -> "it already exists";
            case NotDirectoryException n -> "not a directory";
            case DirectoryNotEmptyException d -> "directory not empty";
            default -> e.getMessage() != null ? e.getMessage() : e.getClass().getSimpleName();
        };
    }

    /** The file the exception names, if it names one, and the reason: {@code "/a/b.json: permission denied"}. */
    public static String withFile(IOException e) {
        return withFile(e, null);
    }

    /**
     * As {@link #withFile(IOException)}, without the file when it is {@code named}, which the message names already
     * ({@code "cannot write keys to DIR: " + withFile(e, DIR)}).
     */
    public static String withFile(IOException e, Object named) {
        if (e instanceof FileSystemException f && f.getFile() != null
                && (named == null || !f.getFile().equals(named.toString()))) {
            return f.getFile() + ": " + of(e);
        }
        return of(e);
    }
}
