package io.kolo.bench;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.TimeUnit;

/**
 * Lets {@code kolo bench --compare} take turns between Kolo and a peer at every size, so that both meet the machine in
 * the same state: a VM's memory speed can change by 2x from one minute to the next, and
 * series run one after the other then compare two different machines.
 *
 * <p>The Kolo ranks split each size's timed iterations into slices. Before slice {@code k} rank 0 announces it (file
 * {@code wait.k} in the gate directory, holding the size in bytes) and every rank waits until the harness opens it
 * ({@code go.k}); the harness runs the peer's slice of the same size meanwhile. Files, because the ranks are processes
 * on this machine that the harness starts through {@code kolo run}, and a poll every millisecond costs nothing beside
 * a measurement.
 */
public final class SliceGate {
    /** The gate directory, set in every Kolo rank; none: no turns. */
    static final String DIR_VARIABLE = "KOLO_BENCH_GATE";
    /** Slices per size, set in every Kolo rank. */
    static final String SLICES_VARIABLE = "KOLO_BENCH_SLICES";
    private static final long POLL_MILLIS = 1;

    private final Path dir;
    private final int slices;

    /** @param slices how many slices each size is timed in, on each side */
    public SliceGate(Path dir, int slices) {
        if (slices < 1) {
            throw new IllegalArgumentException("slices must be at least 1, got " + slices);
        }
        this.dir = dir;
        this.slices = slices;
    }

    /** The gate the harness described in a Kolo rank's environment ({@link #variables()}); empty without one. */
    static Optional<SliceGate> fromEnvironment(Map<String, String> env) {
        String d = env.get(DIR_VARIABLE);
        if (d == null || d.isBlank()) {
            return Optional.empty();
        }
        try {
            return Optional.of(new SliceGate(Path.of(d), Integer.parseInt(env.getOrDefault(SLICES_VARIABLE,
                    "1"))));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(SLICES_VARIABLE + "='" + env.get(SLICES_VARIABLE)
                    + "' is not a number of slices");
        }
    }

    /** What the harness sets in every Kolo rank so that it takes turns through this gate. */
    public Map<String, String> variables() {
        return Map.of(DIR_VARIABLE, dir.toString(), SLICES_VARIABLE, Integer.toString(slices));
    }

    int slices() {
        return slices;
    }

    /** Kolo rank 0: slice {@code slice}, of {@code bytes}, is next. */
    void announce(int slice, long bytes) {
        write("wait." + slice, Long.toString(bytes));
    }

    /** Kolo ranks: blocks until the harness opens slice {@code slice}. */
    void awaitOpen(int slice, Duration timeout) throws InterruptedException {
        Path go = dir.resolve("go." + slice);
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!Files.exists(go)) {
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException("slice " + slice + " was not opened within " + timeout.toSeconds()
                        + " s: is 'kolo bench' still running? (gate " + dir + ")");
            }
            TimeUnit.MILLISECONDS.sleep(POLL_MILLIS);
        }
    }

    /** Harness: the size of slice {@code slice} once Kolo announced it, else empty. */
    OptionalLong announced(int slice) {
        Path wait = dir.resolve("wait." + slice);
        if (!Files.exists(wait)) {
            return OptionalLong.empty();
        }
        try {
            return OptionalLong.of(Long.parseLong(Files.readString(wait).trim()));
        } catch (IOException | NumberFormatException e) {
            throw new IllegalStateException("unreadable slice announcement " + wait + ": " + e.getMessage(), e);
        }
    }

    /** Harness: lets the Kolo ranks run slice {@code slice}. */
    void open(int slice) {
        write("go." + slice, "");
    }

    private void write(String name, String content) {
        try {
            // Written aside and moved, so a reader never sees a half-written file.
            Path tmp = Files.createTempFile(dir, name, ".tmp");
            Files.writeString(tmp, content);
            Files.move(tmp, dir.resolve(name), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + dir.resolve(name), e);
        }
    }
}
