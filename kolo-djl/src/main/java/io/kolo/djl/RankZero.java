package io.kolo.djl;

import ai.djl.Model;
import io.kolo.Communicator;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * What only one rank should do: print progress and write checkpoints. Every rank holds the same parameters,
 * so N copies of each line and N writers to one file are noise at best and corrupt files at worst.
 */
public final class RankZero {
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
     */
    public void saveCheckpoint(Model model, Path dir, int epoch) {
        IOException failure = null;
        if (isRankZero()) {
            try {
                Files.createDirectories(dir);
                model.setProperty("Epoch", Integer.toString(epoch));
                model.save(dir, model.getName());
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
}
