package io.kolo.launcher.tools;

import io.kolo.launcher.job.UsageException;

import io.kolo.bootstrap.IoReason;

import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * A file a command writes when it is done ({@code kolo bench --json}, {@code --plot}), checked before it starts: a
 * benchmark sweep takes minutes, and finding out at its end that the results cannot be written loses them.
 */
final class OutputFile {
    private OutputFile() {
    }

    /**
     * Makes the file's directory and opens the file for appending (removing it again if this made it), or throws
     * naming {@code flag}, the file and why.
     */
    static void checkWritable(String flag, Path file) {
        if (file == null) {
            return;
        }
        String cannot = flag + " " + file + ": cannot write there: ";
        if (Files.isDirectory(file)) {
            throw new UsageException(cannot + file + ": is a directory");
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
        } catch (FileAlreadyExistsException e) {
            // createDirectories met a file where a directory of the path should be.
            throw new UsageException(cannot + e.getFile() + ": not a directory");
        } catch (IOException e) {
            throw new UsageException(cannot + IoReason.withFile(e));
        }
    }

    /** Writes a plot to its file. */
    interface PlotWriter {
        void write(Path file) throws IOException;
    }

    /**
     * Writes a finished benchmark's JSON and plot where they were asked for (either may be null), saying each file as
     * {@code who} ("kolo bench"); 0, or 1 after one line saying why a file could not be written.
     */
    static int writeResults(String who, Path json, String jsonText, Path plot, PlotWriter plotWriter, PrintStream err) {
        try {
            if (json != null) {
                if (json.getParent() != null) {
                    Files.createDirectories(json.getParent());
                }
                Files.writeString(json, jsonText);
                err.println(who + ": wrote " + json);
            }
            if (plot != null) {
                plotWriter.write(plot);
                err.println(who + ": wrote " + plot);
            }
        } catch (IOException e) {
            err.println("kolo: cannot write results: " + IoReason.withFile(e));
            return 1;
        }
        return 0;
    }
}
