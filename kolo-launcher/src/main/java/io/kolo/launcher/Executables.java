package io.kolo.launcher;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** Finds a program the way {@code execvp} would, so a rank that cannot start is reported before anything starts it. */
final class Executables {
    private Executables() {
    }

    /** Throws, naming why, unless {@code program} is an executable file itself or found on {@code path}. */
    static void require(String program, String path) throws IOException {
        require(program, path, null);
    }

    /**
     * As {@link #require(String, String)} for a rank that runs in {@code workingDirectory} (null: this process's), where
     * a relative path such as {@code ./prog} is looked up, as the rank's exec will.
     */
    static void require(String program, String path, String workingDirectory) throws IOException {
        if (program.contains("/")) {
            Path p = workingDirectory == null ? Path.of(program) : Path.of(workingDirectory).resolve(program);
            if (!Files.exists(p)) {
                throw new IOException(program + ": No such file or directory" + (workingDirectory == null
                        || Path.of(program).isAbsolute() ? "" : " (in " + workingDirectory + ", the ranks' working"
                        + " directory)"));
            }
            if (Files.isDirectory(p) || !Files.isExecutable(p)) {
                throw new IOException(program + ": Permission denied (not an executable file)");
            }
            return;
        }
        for (String dir : (path == null || path.isEmpty() ? "/usr/bin:/bin" : path).split(":", -1)) {
            Path p = Path.of(dir.isEmpty() ? "." : dir, program);
            if (Files.isRegularFile(p) && Files.isExecutable(p)) {
                return;
            }
        }
        throw new IOException(program + ": command not found on the PATH (" + path + ")");
    }
}
