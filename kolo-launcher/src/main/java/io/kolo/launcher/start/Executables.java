package io.kolo.launcher.start;

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
            requireInterpreter(program, p);
            return;
        }
        for (String dir : (path == null || path.isEmpty() ? "/usr/bin:/bin" : path).split(":", -1)) {
            Path p = Path.of(dir.isEmpty() ? "." : dir, program);
            if (Files.isRegularFile(p) && Files.isExecutable(p)) {
                requireInterpreter(program, p);
                return;
            }
        }
        throw new IOException(program + ": command not found on the PATH (" + path + ")");
    }

    /**
     * A script's {@code #!} interpreter must exist too: exec reports a missing one as the script itself missing
     * ("No such file or directory"), which is most often a script with Windows line endings, naming "/bin/sh\r".
     */
    private static void requireInterpreter(String program, Path script) throws IOException {
        byte[] head;
        try (java.io.InputStream in = Files.newInputStream(script)) {
            head = in.readNBytes(256);
        } catch (IOException unreadable) {
            return;                           // executable but not readable: exec will say what it says
        }
        if (head.length < 3 || head[0] != '#' || head[1] != '!') {
            return;
        }
        String line = new String(head, 2, head.length - 2, java.nio.charset.StandardCharsets.ISO_8859_1);
        int end = line.indexOf('\n');
        line = (end >= 0 ? line.substring(0, end) : line).replaceFirst("^[ \t]+", "");
        // As the kernel reads it: the interpreter ends at a space, a tab or the end of the line (a CR is kept).
        String interpreter = line.split("[ \t]", 2)[0];
        try {
            if (!interpreter.startsWith("/") || Files.exists(Path.of(interpreter))) {
                return;
            }
        } catch (java.nio.file.InvalidPathException notAPath) {
            return;
        }
        boolean crlf = interpreter.endsWith("\r");
        throw new IOException(program + ": its #! line names the interpreter '" + interpreter.replace("\r", "\\r")
                + "', which does not exist" + (crlf ? ": the script has Windows (CRLF) line endings; convert it, e.g."
                + " sed -i 's/\\r$//' " + program : ""));
    }
}
