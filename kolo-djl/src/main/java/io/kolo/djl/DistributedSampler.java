package io.kolo.djl;

import ai.djl.training.dataset.RandomAccessDataset;
import ai.djl.training.dataset.Sampler;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.SplittableRandom;

/**
 * Shards any DJL {@link RandomAccessDataset} across ranks: each rank sees a disjoint part of every epoch, in
 * mini-batches. Plug it in with {@code builder.setSampling(new DistributedSampler(...))}.
 *
 * <p>With shuffling, every epoch is a fresh permutation drawn from {@code seed + epoch}, the same on every
 * rank, so the shards stay disjoint. The epoch advances by one at each {@link #sample} call (each pass over
 * the dataset), or is set with {@link #setEpoch}.
 *
 * <p>{@link Tail#PAD} (default) gives every rank the same number of samples by repeating the first ones of
 * the permutation, so all ranks run the same number of steps; {@link Tail#DROP} drops the remainder instead;
 * {@link Tail#UNEVEN} keeps each sample exactly once and leaves ranks with different batch counts, for loops
 * that end with {@link DistributedTrainer#join()}.
 *
 * <p>In an elastic job ({@link ElasticTrainerState}) an epoch can resume part-way with another number of ranks. The
 * ranks take the epoch's permutation round-robin (rank {@code r} the {@code r}-th, {@code r + size}-th, ... sample),
 * so after every rank has trained {@code k} full batches the samples used are exactly the first
 * {@code k * batchSize * size} of the permutation. A resumed epoch deals out only the rest among the new ranks: no
 * sample of the epoch is trained twice and none is skipped (padding and dropping aside, which only the epoch's last
 * batch sees).
 */
public final class DistributedSampler implements Sampler {
    /** What to do with the samples that do not divide evenly among the ranks. */
    public enum Tail { PAD, DROP, UNEVEN }

    private int rank;
    private int size;
    private final int batchSize;
    private final boolean shuffle;
    private final long seed;
    private final Tail tail;
    private int epoch;
    /** Samples at the start of the epoch's permutation that earlier jobs of an elastic run already trained. */
    private long consumed;
    /** The dataset's size at the last {@link #sample}, -1 before it. */
    private long datasetSize = -1;

    /** Shuffled, padded shards for the rank and size of {@link io.kolo.Kolo}. */
    public DistributedSampler(int batchSize, boolean shuffle, long seed) {
        this(io.kolo.Kolo.rank(), io.kolo.Kolo.size(), batchSize, shuffle, seed, Tail.PAD);
    }

    public DistributedSampler(int rank, int size, int batchSize, boolean shuffle, long seed, Tail tail) {
        checkRank(rank, size);
        if (batchSize < 1) {
            throw new IllegalArgumentException("batch size must be >= 1, not " + batchSize);
        }
        this.rank = rank;
        this.size = size;
        this.batchSize = batchSize;
        this.shuffle = shuffle;
        this.seed = seed;
        this.tail = java.util.Objects.requireNonNull(tail, "tail");
    }

    public void setEpoch(int epoch) {
        resume(epoch, 0);
    }

    /**
     * The next {@link #sample} gives this rank its share of {@code epoch} without the first {@code consumed} samples
     * of the epoch's permutation, which every rank together has already trained.
     */
    void resume(int epoch, long consumed) {
        if (consumed < 0) {
            throw new IllegalArgumentException("consumed samples must be >= 0, not " + consumed);
        }
        this.epoch = epoch;
        this.consumed = consumed;
    }

    /** From now on this sampler deals to rank {@code rank} of {@code size} (an elastic job's new size). */
    void reshard(int rank, int size) {
        checkRank(rank, size);
        this.rank = rank;
        this.size = size;
    }

    int rank() {
        return rank;
    }

    int size() {
        return size;
    }

    /**
     * Samples of the epoch trained once every rank has taken {@code steps} more batches after {@code consumed}: whole
     * batches of every rank cover the next {@code batchSize * size} samples of the permutation.
     */
    long consumedAfter(long consumed, long steps) {
        if (datasetSize < 0) {
            throw new IllegalStateException("no epoch sampled yet: the dataset's size is not known");
        }
        return Math.min(datasetSize, consumed + steps * batchSize * size);
    }

    public int epoch() {
        return epoch;
    }

    @Override
    public int getBatchSize() {
        return batchSize;
    }

    /** This rank's indices for the current epoch (after its consumed samples), then advances to the next epoch. */
    @Override
    public Iterator<List<Long>> sample(RandomAccessDataset dataset) {
        datasetSize = dataset.size();
        long[] mine = indices(datasetSize, epoch, consumed);
        resume(epoch + 1, 0);
        List<List<Long>> batches = new ArrayList<>();
        for (int start = 0; start < mine.length; start += batchSize) {
            List<Long> batch = new ArrayList<>(batchSize);
            for (int i = start; i < Math.min(mine.length, start + batchSize); i++) {
                batch.add(mine[i]);
            }
            batches.add(batch);
        }
        return batches.iterator();
    }

    /** The dataset indices this rank gets in {@code epoch}, in order. */
    long[] indices(long datasetSize, int epoch) {
        return indices(datasetSize, epoch, 0);
    }

    /** The dataset indices this rank gets in {@code epoch} after its first {@code consumed} samples, in order. */
    long[] indices(long datasetSize, int epoch, long consumed) {
        int n = Math.toIntExact(datasetSize);
        if (n < 1) {
            throw new IllegalArgumentException("the dataset is empty: nothing to shard across " + size + " ranks");
        }
        if (n < size && tail != Tail.PAD) {
            throw new IllegalArgumentException("a dataset of " + n + " samples cannot be split across " + size
                    + " ranks");
        }
        long[] order = new long[n];
        for (int i = 0; i < n; i++) {
            order[i] = i;
        }
        if (shuffle) {
            SplittableRandom random = new SplittableRandom(seed + epoch);
            for (int i = n - 1; i > 0; i--) {
                int j = random.nextInt(i + 1);
                long t = order[i];
                order[i] = order[j];
                order[j] = t;
            }
        }
        // The rest of the epoch, dealt round-robin; the tail rule applies to it.
        int from = (int) Math.min(n, consumed);
        int m = n - from;
        if (m == 0) {
            return new long[0];
        }
        int per = switch (tail) {
            case PAD -> Math.ceilDiv(m, size);
            case DROP -> m / size;
            case UNEVEN -> Math.max(0, (m - rank + size - 1) / size);
        };
        long[] mine = new long[per];
        for (int k = 0; k < per; k++) {
            mine[k] = order[from + (rank + k * size) % m];
        }
        return mine;
    }

    private static void checkRank(int rank, int size) {
        if (size < 1 || rank < 0 || rank >= size) {
            throw new IllegalArgumentException("rank " + rank + " is not in a job of " + size + " ranks");
        }
    }
}
