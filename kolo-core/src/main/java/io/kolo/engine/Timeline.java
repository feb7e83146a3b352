package io.kolo.engine;

import io.kolo.bootstrap.IoReason;
import io.kolo.bootstrap.LazyLogger;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * Chrome-trace timeline ({@code KOLO_TIMELINE}), one "process" row per op name, as Horovod draws it.
 * The file is a JSON array that is closed after every flush: each flush overwrites the trailing {@code ]}
 * with the new events and a fresh {@code ]}, so the file stays valid JSON if the job dies between flushes.
 * Events collect in a buffer on the engine thread and are written once per cycle.
 */
final class Timeline implements AutoCloseable {
    private static final System.Logger LOG = LazyLogger.of(Timeline.class);
    private static final byte[] CLOSE = "\n]\n".getBytes(StandardCharsets.UTF_8);

    private final FileChannel file;
    private final StringBuilder pending = new StringBuilder();
    private final java.util.Map<String, Integer> rows = new java.util.HashMap<>();
    private final long originNanos = System.nanoTime();
    private long end;
    private boolean first = true;
    private boolean broken;

    private Timeline(FileChannel file) {
        this.file = file;
    }

    /** Opens (truncating) the timeline file; returns null and logs if it cannot be written. */
    static Timeline open(Path path) {
        try {
            FileChannel ch = FileChannel.open(path, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                    StandardOpenOption.TRUNCATE_EXISTING);
            ch.write(ByteBuffer.wrap("[".getBytes(StandardCharsets.UTF_8)));
            Timeline t = new Timeline(ch);
            t.end = 1;
            ch.write(ByteBuffer.wrap(CLOSE), 1);
            return t;
        } catch (IOException e) {
            LOG.log(System.Logger.Level.WARNING, "KOLO_TIMELINE: cannot write " + path + ": " + IoReason.of(e)
                    + "; the job goes on without a timeline (create the directory or name another file)");
            return null;
        }
    }

    long now() {
        return (System.nanoTime() - originNanos) / 1000;
    }

    /** Micro-seconds since the timeline started, for a nanoTime taken earlier. */
    long micros(long nanoTime) {
        return Math.max(0, (nanoTime - originNanos) / 1000);
    }

    /** A complete event (Chrome trace phase X) for op {@code name}. */
    void span(String name, String activity, long startMicros, long endMicros, String args) {
        int row = rows.computeIfAbsent(name, n -> {
            int id = rows.size() + 1;
            event("{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":" + id + ",\"args\":{\"name\":\"" + escape(n) + "\"}}");
            event("{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":" + id + ",\"args\":{\"sort_index\":" + id + "}}");
            return id;
        });
        event("{\"name\":\"" + activity + "\",\"ph\":\"X\",\"pid\":" + row + ",\"tid\":1,\"ts\":" + startMicros
                + ",\"dur\":" + Math.max(0, endMicros - startMicros) + (args == null ? "" : ",\"args\":{" + args + "}") + "}");
    }

    /**
     * Marks the start of a cycle that runs ops ({@code KOLO_TIMELINE_MARK_CYCLES}), as Horovod's {@code CYCLE_START}:
     * a global instant event, drawn as a line across every row. Idle cycles are not marked, so the file does not grow
     * with every cycle time of an idle job.
     */
    void cycleStart() {
        event("{\"name\":\"CYCLE_START\",\"ph\":\"i\",\"s\":\"g\",\"pid\":0,\"tid\":0,\"ts\":" + now() + "}");
    }

    private void event(String json) {
        pending.append(first ? "\n" : ",\n").append(json);
        first = false;
    }

    /** Writes what collected since the last flush, keeping the file a closed JSON array. */
    void flush() {
        if (pending.isEmpty() || broken) {
            return;
        }
        byte[] bytes = (pending + new String(CLOSE, StandardCharsets.UTF_8)).getBytes(StandardCharsets.UTF_8);
        pending.setLength(0);
        try {
            file.write(ByteBuffer.wrap(bytes), end);
            end += bytes.length - CLOSE.length;
        } catch (IOException e) {
            broken = true;
            LOG.log(System.Logger.Level.WARNING, "KOLO_TIMELINE: writing failed, timeline stops here: " + e.getMessage());
        }
    }

    static String escape(String s) {
        StringBuilder sb = new StringBuilder(s.length());
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> sb.append("\\\"");
                case '\\' -> sb.append("\\\\");
                default -> {
                    if (c < 0x20) {
                        sb.append(String.format("\\u%04x", (int) c));
                    } else {
                        sb.append(c);
                    }
                }
            }
        }
        return sb.toString();
    }

    @Override
    public void close() {
        flush();
        try {
            file.close();
        } catch (IOException e) {
            LOG.log(System.Logger.Level.DEBUG, "closing timeline", e);
        }
    }
}
