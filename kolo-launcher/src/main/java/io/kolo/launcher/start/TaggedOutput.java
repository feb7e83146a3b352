package io.kolo.launcher.start;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

/**
 * One of the launcher's streams shared by all ranks. Lines are written whole under one lock, so output
 * from different ranks interleaves only between lines; bytes are passed through untouched, whatever the
 * ranks' encoding. One line is dropped: the JDK's notice that a rank uses the incubating Vector API, which
 * {@code kolo run} itself adds to the java commands it builds ({@code --add-modules=jdk.incubator.vector}).
 */
public final class TaggedOutput {
    // A rank printing without newlines must not make the launcher buffer without bound.
    static final int MAX_LINE = 64 * 1024;

    // Open MPI's --timestamp-output: ctime's layout, in the launcher's time zone.
    private static final java.time.format.DateTimeFormatter STAMP =
            java.time.format.DateTimeFormatter.ofPattern("EEE MMM ppd HH:mm:ss yyyy", java.util.Locale.ROOT);

    private final PrintStream target;
    private final String streamName;
    private final Runnable onClosed;
    private volatile boolean timestamps;
    private volatile Lines copy;

    /** Where each line also goes as text (the job view keeps each rank's last lines). */
    public interface Lines {
        void line(int rank, String text);
    }

    public TaggedOutput(PrintStream target, String streamName) {
        this(target, streamName, null);
    }

    /**
     * @param onClosed run (once per failed write) when {@code target} can no longer be written, as when the reader of
     *                 a pipe went away ({@code kolo run ... | head}); null: nothing
     */
    public TaggedOutput(PrintStream target, String streamName, Runnable onClosed) {
        this.target = target;
        this.streamName = streamName;
        this.onClosed = onClosed;
    }

    /** Prefixes each line with the time it arrived (mpirun --timestamp-output). */
    public void timestamps(boolean on) {
        timestamps = on;
    }

    /** Also hands every line shown to {@code lines}, as text. */
    public void copyLinesTo(Lines lines) {
        copy = lines;
    }

    void line(int rank, byte[] buf, int len) {
        String stamp = timestamps ? java.time.LocalDateTime.now().format(STAMP) : "";
        byte[] prefix = (stamp + "[" + rank + "]<" + streamName + ">:").getBytes(StandardCharsets.US_ASCII);
        synchronized (this) {
            target.write(prefix, 0, prefix.length);
            target.write(buf, 0, len);
            target.write('\n');
            target.flush();
            // A PrintStream keeps its write errors to itself: the JVM ignores SIGPIPE, so without this check a job
            // whose reader has gone would run to its end.
            if (onClosed != null && target.checkError()) {
                onClosed.run();
            }
        }
    }

    /**
     * Copies one rank's stream line by line until EOF, to this tagged output and to {@code file} when --output-dir is
     * given. The file gets the rank's bytes as they were (what is cut or trimmed for the screen is not, there). Runs on
     * its own thread per stream.
     */
    public void pump(int rank, InputStream in, OutputStream file) throws IOException {
        byte[] chunk = new byte[8192];
        byte[] line = new byte[256];
        int len = 0;
        int n;
        while ((n = in.read(chunk)) >= 0) {
            for (int i = 0; i < n; i++) {
                byte b = chunk[i];
                if (b == '\n' || len == MAX_LINE) {
                    emit(rank, line, len, file, b == '\n');
                    len = 0;
                    if (b == '\n') {
                        continue;
                    }
                }
                if (len == line.length) {
                    line = java.util.Arrays.copyOf(line, Math.min(MAX_LINE, line.length * 2));
                }
                line[len++] = b;
            }
        }
        if (len > 0) {
            emit(rank, line, len, file, false);
        }
    }

    private static final byte[] INCUBATOR_NOTICE =
            "WARNING: Using incubator modules: jdk.incubator.vector".getBytes(StandardCharsets.US_ASCII);

    /** One line for the screen ({@code newline}: it ended with one, else it was cut at MAX_LINE or at EOF). */
    private void emit(int rank, byte[] line, int len, OutputStream file, boolean newline) throws IOException {
        if (java.util.Arrays.equals(line, 0, len, INCUBATOR_NOTICE, 0, INCUBATOR_NOTICE.length)) {
            return;
        }
        // Strip the CR of CRLF so the tag is not followed by a stray carriage return on screen.
        int shown = len > 0 && line[len - 1] == '\r' ? len - 1 : len;
        line(rank, line, shown);
        Lines lines = copy;
        if (lines != null) {
            lines.line(rank, new String(line, 0, shown, java.nio.charset.Charset.defaultCharset()));
        }
        if (file != null) {
            file.write(line, 0, len);
            if (newline) {
                file.write('\n');
            }
            file.flush();
        }
    }
}
