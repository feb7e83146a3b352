package io.kolo.djl;

import ai.djl.Model;
import io.kolo.Communicator;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

/**
 * What only one rank should do: print progress and write checkpoints. Every rank holds the same parameters,
 * so N copies of each line and N writers to one file are noise at best and corrupt files at worst.
 */
public final class RankZero {
    // Where rank 0 writes a checkpoint before it moves it into place; DJL's loader looks only for NAME-NNNN.params.
    private static final String SAVING = ".saving-";
    private final Communicator comm;

    public RankZero(Communicator comm) {
        this.comm = java.util.Objects.requireNonNull(comm, "comm");
    }

    public boolean isRankZero() {
        return comm.rank() == 0;
    }

    /** Prints {@code line} to standard output on rank 0 only. */
    public void log(String line) {
        if (isRankZero()) {
            System.out.println(line);
        }
    }

    /**
     * Rank 0 saves {@code model} under {@code dir} as DJL's {@code model.save} does (with the epoch number);
     * the others wait until it is written, so a checkpoint is complete before anyone reads it. When rank 0 cannot
     * write it, every rank throws with rank 0's reason: the others would otherwise wait for a rank that has gone,
     * and fail naming only its shutdown.
     *
     * <p>A checkpoint appears whole or not at all: rank 0 writes it into a directory of its own under {@code dir},
     * forces it to disk and then renames it into place, so a rank killed while saving leaves the previous checkpoint as
     * the newest one (DJL's {@code model.load} takes the newest), never a truncated file.
     */
    public void saveCheckpoint(Model model, Path dir, int epoch) {
        IOException failure = null;
        if (isRankZero()) {
            try {
                Files.createDirectories(dir);
                model.setProperty("Epoch", Integer.toString(epoch));
                saveWhole(model, dir);
            } catch (IOException e) {
                failure = e;
            }
        }
        String reason = comm.broadcastObject(failure == null ? null
                : failure.getMessage() != null ? failure.getMessage() : failure.toString(), 0);
        if (reason != null) {
            throw new UncheckedIOException("rank 0 could not save a checkpoint in " + dir + ": " + reason,
                    failure != null ? failure : new IOException(reason));
        }
    }

    private static void saveWhole(Model model, Path dir) throws IOException {
        removeUnfinished(dir);
        Path saving = Files.createTempDirectory(dir, SAVING);
        try {
            model.save(saving, model.getName());
            for (Path file : list(saving)) {
                try (FileChannel written = FileChannel.open(file, StandardOpenOption.WRITE)) {
                    written.force(true);
                }
                Files.move(file, dir.resolve(file.getFileName()), StandardCopyOption.ATOMIC_MOVE,
                        StandardCopyOption.REPLACE_EXISTING);
            }
        } finally {
            delete(saving);
        }
    }

    /** What a rank 0 killed while saving left behind. */
    private static void removeUnfinished(Path dir) throws IOException {
        for (Path p : list(dir)) {
            if (p.getFileName().toString().startsWith(SAVING) && Files.isDirectory(p)) {
                delete(p);
            }
        }
    }

    private static List<Path> list(Path dir) throws IOException {
        try (Stream<Path> files = Files.list(dir)) {
            return files.toList();
        }
    }

    private static void delete(Path tree) throws IOException {
        if (!Files.exists(tree)) {
            return;
        }
        try (Stream<Path> all = Files.walk(tree)) {
            for (Path p : all.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }
}
